import { truncateTenant } from '@runledger/ledger';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RouteDeps } from '../options';
import { admissionTenant } from '../security';

/**
 * LangGraph's test hook flags. `checkpoint` is what LangGraph's own test helper sends for
 * `checkpointer`; `store`: Runledger keeps no LangGraph store, so there is nothing to delete.
 */
const TruncateBody = z.looseObject({
  runs: z.boolean().optional(),
  threads: z.boolean().optional(),
  assistants: z.boolean().optional(),
  checkpointer: z.boolean().optional(),
  checkpoint: z.boolean().optional(),
  store: z.boolean().optional(),
});

/**
 * POST /internal/truncate, as LangGraph's server serves it to its API tests, registered only with
 * RUNLEDGER_TEST_HOOKS=1 (404 otherwise): deletes the caller's tenant's runs, threads, stored
 * assistants and checkpoints in this producer's schema, as the flags ask. Other tenants keep theirs.
 */
export async function testHookRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.post(
    '/internal/truncate',
    { schema: { tags: ['langgraph'], summary: "Test hook: delete the caller's tenant's runs, threads, assistants, checkpoints", body: TruncateBody } },
    async (request) => {
      const b = (request.body ?? {}) as z.infer<typeof TruncateBody>;
      const parts = { runs: b.runs, threads: b.threads, assistants: b.assistants, checkpoints: b.checkpointer || b.checkpoint };
      const deleted = await truncateTenant(deps.ledger.pool, admissionTenant(request), parts);
      request.log.warn({ deleted }, 'test hook: tenant truncated');
      return { ok: true };
    },
  );
}
