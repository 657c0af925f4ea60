import { LedgerStore, truncateTenant } from '@runledger/ledger';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RouteDeps } from '../options';
import { admissionTenant } from '../security';

/**
 * LangGraph's test hook flags. `checkpoint` is what LangGraph's own test helper sends for
 * `checkpointer`; `store` deletes the tenant's store items.
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
 * assistants, checkpoints and store items in this producer's schema, as the flags ask. Other tenants keep theirs.
 */
export async function testHookRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.post(
    '/internal/truncate',
    { schema: { tags: ['langgraph'], summary: "Test hook: delete the caller's tenant's runs, threads, assistants, checkpoints, store", body: TruncateBody } },
    async (request) => {
      const b = (request.body ?? {}) as z.infer<typeof TruncateBody>;
      const parts = { runs: b.runs, threads: b.threads, assistants: b.assistants, checkpoints: b.checkpointer || b.checkpoint };
      const deleted = await truncateTenant(deps.ledger.pool, admissionTenant(request), parts);
      if (b.store) await new LedgerStore(deps.ledger.pool, { tenant: admissionTenant(request) }).truncate();
      request.log.warn({ deleted }, 'test hook: tenant truncated');
      return { ok: true };
    },
  );
}
