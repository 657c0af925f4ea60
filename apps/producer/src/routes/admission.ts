import type { AdmitRequest } from '@runledger/ledger';
import { RUN_REQUEST_KEY } from '@runledger/runtime';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http-errors';
import type { RouteDeps } from '../options';
import { storedRunConfig } from '../run-config';
import { scheduledRunAt } from '../schedule';
import type { SubmitBody } from '../schemas';
import { admissionTenant, checkMetadataSize } from '../security';
import { checkWebhook } from '../webhooks/admission';

/**
 * A valid submission as the ledger's admission request, for POST /v1/jobs and each job of
 * POST /v1/jobs/batch. Throws ApiError 422 `unknown_graph` / `invalid_input` / `invalid_config`,
 * 400 for oversized metadata, 422 `invalid_webhook` (a destination not allowed), 400 `invalid_schedule` (scheduledRunAt). The tenant comes from the
 * caller's key, never from the body (SubmitBody is strict). A `config` or `context` (or the graph's
 * LANGGRAPH_CONFIG entry) is stored in the job's run request, beside the caller's metadata.
 */
export function admissionRequest(
  request: FastifyRequest,
  deps: Pick<RouteDeps, 'graphs' | 'graphConfig' | 'webhooks'>,
  body: SubmitBody,
  idempotencyKey: string | undefined,
): AdmitRequest {
  const graph = deps.graphs.get(body.graph);
  if (!graph) throw new ApiError(422, 'unknown_graph', `No graph named "${body.graph}"; known graphs: ${[...deps.graphs.keys()].join(', ')}.`);
  const problem = graph.validateInput?.(body.input);
  if (problem) throw new ApiError(422, 'invalid_input', problem);
  checkMetadataSize(request, body.metadata);
  checkWebhook(deps.webhooks, body.webhook, 'webhook');
  const { runAt, delayMs, config, context, ...rest } = body;
  const run = storedRunConfig(deps.graphConfig, graph.name, undefined, { config, context });
  const metadata = run ? { ...rest.metadata, [RUN_REQUEST_KEY]: run } : rest.metadata;
  // The version admission records: only workers serving it run the job.
  return { ...rest, metadata, runAt: scheduledRunAt({ runAt, delayMs }), idempotencyKey, tenant: admissionTenant(request), graphVersion: graph.version };
}
