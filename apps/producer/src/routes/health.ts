import type { FastifyInstance } from 'fastify';
import { queueReachable } from '../delivery';
import type { RouteDeps } from '../options';
import { cachedProbe, READINESS_CACHE_MS } from '../readiness';
import { Readiness } from '../schemas';

const PROBE_TIMEOUT_MS = 1_000;

/**
 * GET /healthz (the process answers) and GET /readyz (PostgreSQL and the queue answer; the answer
 * is reused for READINESS_CACHE_MS, so polling /readyz costs the backends at most one probe a second).
 */
export async function healthRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { ledger, queue } = deps;
  const readiness = cachedProbe(async () => {
    const [database, queued] = await Promise.all([
      // The cheapest ledger read: one index probe on jobs.
      ledger.list({ limit: 1 }).then(
        () => 'ok',
        (err: Error) => {
          app.log.warn({ err: err.message }, 'readiness: PostgreSQL check failed');
          return 'unavailable';
        },
      ),
      queueReachable(queue, PROBE_TIMEOUT_MS).then((ok) => (ok ? 'ok' : 'unavailable')),
    ]);
    return { ready: database === 'ok' && queued === 'ok', checks: { database, queue: queued } };
  }, READINESS_CACHE_MS);

  app.get('/healthz', { schema: { summary: 'Liveness: the process is up', tags: ['health'], security: [], response: { 200: Readiness } } }, async () => ({
    status: 'ok',
    checks: {},
  }));

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: PostgreSQL and the queue answer (one probe a second at most; the answer is reused for 1 s)',
        tags: ['health'],
        security: [],
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (_request, reply) => {
      const { ready, checks } = await readiness();
      if (ready) return { status: 'ready', checks };
      const down = Object.entries(checks)
        .filter(([, v]) => v !== 'ok')
        .map(([k]) => k);
      return reply.code(503).send({ status: 'not_ready', checks, error: { code: 'not_ready', message: `Not ready: ${down.join(' and ')} unavailable.` } });
    },
  );
}
