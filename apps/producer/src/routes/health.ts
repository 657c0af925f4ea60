import type { FastifyInstance } from 'fastify';
import { queueReachable } from '../delivery';
import type { RouteDeps } from '../options';
import { Readiness } from '../schemas';

const PROBE_TIMEOUT_MS = 1_000;

/** GET /healthz (the process answers) and GET /readyz (PostgreSQL and the queue answer). */
export async function healthRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { ledger, queue } = deps;

  app.get('/healthz', { schema: { summary: 'Liveness: the process is up', tags: ['health'], security: [], response: { 200: Readiness } } }, async () => ({
    status: 'ok',
    checks: {},
  }));

  app.get(
    '/readyz',
    { schema: { summary: 'Readiness: PostgreSQL and the queue answer', tags: ['health'], security: [], response: { 200: Readiness, 503: Readiness } } },
    async (request, reply) => {
      const [database, queued] = await Promise.all([
        // The cheapest ledger read: one index probe on jobs.
        ledger.list({ limit: 1 }).then(
          () => 'ok',
          (err: Error) => {
            request.log.warn({ err: err.message }, 'readiness: PostgreSQL check failed');
            return 'unavailable';
          },
        ),
        queueReachable(queue, PROBE_TIMEOUT_MS).then((ok) => (ok ? 'ok' : 'unavailable')),
      ]);
      const checks = { database, queue: queued };
      if (database === 'ok' && queued === 'ok') return { status: 'ready', checks };
      const down = Object.entries(checks)
        .filter(([, v]) => v !== 'ok')
        .map(([k]) => k);
      return reply.code(503).send({ status: 'not_ready', checks, error: { code: 'not_ready', message: `Not ready: ${down.join(' and ')} unavailable.` } });
    },
  );
}
