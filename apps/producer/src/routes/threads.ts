import { langGraphThreadId, ThreadSaver } from '@runledger/ledger';
import type { RunnableGraph } from '@runledger/runtime';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../http-errors';
import type { RouteDeps } from '../options';
import { ErrorBody, ThreadIdParams, ThreadState } from '../schemas';
import { tenantScope } from '../security';

/** GET /v1/threads/:threadId/state: the thread's latest checkpoint, read through the graph of its latest job. */
export async function threadRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { ledger, graphs, schema } = deps;
  // Read-only: an unfenced saver on the ledger's pool (search_path: the schema) that opens values
  // sealed with the ledger's codec.
  const saver = new ThreadSaver(ledger.pool, { schema, codec: ledger.payloadCodec });
  const compiled = new Map<string, RunnableGraph>();

  app.get(
    '/v1/threads/:threadId/state',
    {
      schema: {
        summary: "A thread's current state (values, next nodes, pending interrupts)",
        tags: ['threads'],
        params: ThreadIdParams,
        response: { 200: ThreadState, 400: ErrorBody, 404: ErrorBody, 422: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) => {
      const { threadId } = request.params as z.infer<typeof ThreadIdParams>;
      const latest = (await ledger.list({ threadId, limit: 1, tenant: tenantScope(request) })).jobs[0];
      if (!latest) throw new ApiError(404, 'not_found', `Thread ${threadId} has no job.`);
      const definition = graphs.get(latest.graph);
      if (!definition) {
        throw new ApiError(422, 'unknown_graph', `Thread ${threadId} was last run by graph "${latest.graph}", which this producer's registry lacks.`);
      }
      let graph = compiled.get(definition.name);
      if (!graph) {
        graph = definition.build(saver);
        compiled.set(definition.name, graph);
      }
      // The thread of the job's tenant: another tenant's thread of the same id is another LangGraph thread.
      const snapshot = await graph.getState({ configurable: { thread_id: langGraphThreadId(latest.tenant, threadId) } });
      const configurable = (snapshot.config?.configurable ?? {}) as Record<string, unknown>;
      const parent = (snapshot.parentConfig?.configurable ?? {}) as Record<string, unknown>;
      return {
        threadId,
        jobId: latest.jobId,
        graph: latest.graph,
        values: snapshot.values ?? null,
        next: [...snapshot.next],
        tasks: snapshot.tasks.map((t) => ({ id: t.id, name: t.name, interrupts: [...t.interrupts] })),
        checkpointId: (configurable.checkpoint_id as string | undefined) ?? null,
        parentCheckpointId: (parent.checkpoint_id as string | undefined) ?? null,
        createdAt: snapshot.createdAt ?? null,
        metadata: snapshot.metadata ?? null,
      };
    },
  );
}
