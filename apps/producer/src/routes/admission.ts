import type { AdmitRequest } from '@runledger/ledger';
import type { GraphRegistry } from '@runledger/runtime';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http-errors';
import { scheduledRunAt } from '../schedule';
import type { SubmitBody } from '../schemas';
import { admissionTenant, checkMetadataSize } from '../security';

/**
 * A valid submission as the ledger's admission request, for POST /v1/jobs and each job of
 * POST /v1/jobs/batch. Throws ApiError 422 `unknown_graph` / `invalid_input`, 400 for oversized
 * metadata, 400 `invalid_schedule` (scheduledRunAt). The tenant comes from the caller's key, never from the body (SubmitBody is strict).
 */
export function admissionRequest(request: FastifyRequest, graphs: GraphRegistry, body: SubmitBody, idempotencyKey: string | undefined): AdmitRequest {
  const graph = graphs.get(body.graph);
  if (!graph) throw new ApiError(422, 'unknown_graph', `No graph named "${body.graph}"; known graphs: ${[...graphs.keys()].join(', ')}.`);
  const problem = graph.validateInput?.(body.input);
  if (problem) throw new ApiError(422, 'invalid_input', problem);
  checkMetadataSize(request, body.metadata);
  const { runAt, delayMs, ...rest } = body;
  // The version admission records: only workers serving it run the job.
  return { ...rest, runAt: scheduledRunAt({ runAt, delayMs }), idempotencyKey, tenant: admissionTenant(request), graphVersion: graph.version };
}
