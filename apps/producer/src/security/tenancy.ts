import type { Ledger } from '@runledger/ledger';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http-errors';
import { requestSecurity } from './context';

/**
 * Refuses (409 thread_taken) an admission onto a thread another tenant's jobs use: LangGraph keeps
 * one checkpoint history per thread id, so sharing one would let a tenant read and continue another
 * tenant's state. Skipped in open mode (one tenant). One ledger read per admission that names a
 * thread. Two tenants racing to claim a brand-new thread id within one admission can both pass.
 */
export async function assertThreadAvailable(ledger: Ledger, request: FastifyRequest, threadId: string | undefined): Promise<void> {
  const { caller, authEnabled } = requestSecurity(request);
  if (!authEnabled || threadId === undefined) return;
  const latest = (await ledger.list({ threadId, limit: 1 })).jobs[0];
  if (latest && latest.tenant !== caller.tenant) {
    throw new ApiError(409, 'thread_taken', `threadId "${threadId}" is in use by another tenant; choose another thread id.`);
  }
}
