import type pg from 'pg';
import { run } from './sql';

/** What POST /internal/truncate deletes of one tenant (LangGraph's test hook flags). */
export interface TruncateParts {
  runs?: boolean;
  threads?: boolean;
  assistants?: boolean;
  checkpoints?: boolean;
}

/**
 * Deletes one tenant's runs (jobs with their events, effects and stream logs), threads, stored
 * assistants and checkpoints in the pool's schema, each only when asked (truncate_tenant.sql).
 * For test and dev servers only: it removes admitted jobs. Returns the rows deleted per part.
 */
export async function truncateTenant(
  pool: pg.Pool,
  tenant: string,
  p: TruncateParts,
): Promise<Record<'jobs' | 'threads' | 'assistants' | 'checkpoints', number>> {
  const { rows } = await run(pool, 'truncate_tenant', [tenant, !!p.runs, !!p.threads, !!p.assistants, !!p.checkpoints]);
  const r = rows[0] ?? {};
  return { jobs: Number(r.jobs), threads: Number(r.threads), assistants: Number(r.assistants), checkpoints: Number(r.checkpoints) };
}
