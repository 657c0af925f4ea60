import { hostname } from 'node:os';
import { z } from 'zod';

const int = (def: number, min = 1) => z.coerce.number().int().min(min).default(def);

/** The worker's environment, parsed once at start-up. Defaults are documented in .env.example. */
export const WorkerEnv = z
  .object({
    DATABASE_URL: z.string().url({ message: 'must be a postgres:// URL' }),
    REDIS_URL: z.string().url({ message: 'must be a redis:// URL' }).optional(),
    QUEUE_BACKEND: z.enum(['redis', 'postgres']).optional(),
    QUEUE_PREFIX: z.string().min(1).default('runledger'),
    DB_SCHEMA: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lowercase identifier')
      .default('public'),
    LEASE_TTL_MS: int(5_000, 500),
    WORKER_CONCURRENCY: int(16),
    RUNLEDGER_WORKER_ID: z.string().min(1).default(`${hostname()}-${process.pid}`),
    RUNLEDGER_GRAPHS: z.string().optional(),
    JOB_TIMEOUT_MS: int(15 * 60_000, 100),
    DRAIN_GRACE_MS: int(5_000, 0),
    DRAIN_DEADLINE_MS: int(20_000, 100),
    SWEEP_INTERVAL_MS: int(1_000, 50),
    LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
    RUNLEDGER_TEST_CRASH_AT: z.enum(['after_claim', 'after_invoke']).optional(),
  })
  .transform((env) => ({ ...env, QUEUE_BACKEND: env.QUEUE_BACKEND ?? (env.REDIS_URL ? 'redis' : 'postgres') }))
  .refine((env) => env.QUEUE_BACKEND !== 'redis' || env.REDIS_URL, { message: 'QUEUE_BACKEND=redis needs REDIS_URL', path: ['REDIS_URL'] });

export type WorkerEnv = z.infer<typeof WorkerEnv>;

/** Parses the environment or returns one readable line naming every bad variable. */
export function parseWorkerEnv(env: NodeJS.ProcessEnv): { ok: true; env: WorkerEnv } | { ok: false; message: string } {
  // An empty variable means unset (shells and compose files often export VAR=).
  const r = WorkerEnv.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (r.success) return { ok: true, env: r.data };
  return { ok: false, message: r.error.issues.map((i) => `${i.path.join('.') || 'environment'}: ${i.message}`).join('; ') };
}
