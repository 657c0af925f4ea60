// The seeded job mix of a chaos run: echo, vacation (idempotent and not) and approval jobs,
// with duplicate submissions under one key and a few conflicting ones.
import type { SubmitRequest } from '../packages/client/src/index';
import type { Rng } from './prng';

export type JobKind = 'echo' | 'vacation' | 'vacation_non_idempotent' | 'approval';

export interface JobSpec {
  index: number;
  kind: JobKind;
  /** The idempotency key every submission of this job carries. */
  key: string;
  request: SubmitRequest;
  /** Approvals only: the harness resumes it when it parks (else it stays parked by design). */
  resume: boolean;
  /** Send the same submission twice at once (window M). */
  concurrentDuplicate: boolean;
  /** After the run, send it again (expect 200 and the same job) and once with another body (expect 409). */
  resubmitAfter: boolean;
}

/** Retries are part of the design; a job gives up only when these many attempts failed. */
const MAX_ATTEMPTS = 10;
const SHARED_THREADS = 4;

function echoInput(rng: Rng) {
  return { steps: rng.int(1, 4), sleepMs: rng.pick([0, 50, 150, 300]), traceNodes: true };
}

function vacationInput(rng: Rng, providerIdempotent: boolean) {
  const ms = (max: number) => ({ flight: rng.int(0, max), hotel: rng.int(0, max), car: rng.int(0, max) });
  return {
    delays: ms(400),
    ...(rng.chance(0.3) ? { afterCall: ms(300) } : {}),
    ...(providerIdempotent ? {} : { providerIdempotent: false }),
    traceNodes: true,
  };
}

/** `count` job specs for `seed`; the same seed gives the same jobs, keys and inputs. */
export function buildWorkload(rng: Rng, count: number, seed: number): JobSpec[] {
  const specs: JobSpec[] = [];
  for (let index = 0; index < count; index++) {
    const roll = rng.float();
    const kind: JobKind = roll < 0.4 ? 'echo' : roll < 0.62 ? 'vacation' : roll < 0.75 ? 'vacation_non_idempotent' : 'approval';
    const key = `chaos-${seed}-${index}`;
    let request: SubmitRequest;
    if (kind === 'echo') {
      // A few echo jobs share threads: turns of one thread run one at a time, in admission order.
      const threadId = rng.chance(0.1) ? `chaos-${seed}-thread-${rng.int(1, SHARED_THREADS)}` : undefined;
      request = { graph: 'echo', input: echoInput(rng), ...(threadId ? { threadId } : {}) };
    } else if (kind === 'approval') {
      request = { graph: 'approval', input: { request: `chaos request ${index}`, traceNodes: true } };
    } else {
      request = { graph: 'vacation', input: vacationInput(rng, kind === 'vacation') };
    }
    specs.push({
      index,
      kind,
      key,
      request: { ...request, maxAttempts: MAX_ATTEMPTS, metadata: { chaos: seed, index } },
      resume: kind === 'approval' && rng.chance(0.8),
      concurrentDuplicate: rng.chance(0.05),
      resubmitAfter: rng.chance(0.04),
    });
  }
  return specs;
}

/** A small echo job the harness sends when it needs an admission now (to trip the producer's crash hook). */
export function probeSpec(seed: number, index: number, input: { steps: number; sleepMs?: number } = { steps: 1 }): JobSpec {
  const request = { graph: 'echo', input: { ...input, traceNodes: true }, maxAttempts: MAX_ATTEMPTS, metadata: { chaos: seed, index, probe: true } };
  return { index, kind: 'echo', key: `chaos-${seed}-${index}`, request, resume: false, concurrentDuplicate: false, resubmitAfter: false };
}

/** The body sent under a spec's key with a different request: must be refused with 409. */
export function conflictingRequest(spec: JobSpec): SubmitRequest {
  return { ...spec.request, metadata: { ...spec.request.metadata, conflicting: true } };
}
