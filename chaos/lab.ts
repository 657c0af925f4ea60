// The bench of the crash-window matrix: one stack shared by the windows, helpers to submit, wait
// and observe, and a row type with the expectations a window checks.
import { countThreadCheckpoints, ExampleBookings, type Job, type JobEvent } from '../packages/ledger/src/index';
import { Submissions } from './clients';
import type { Stack } from './stack';
import { listAllJobs, toolEntries } from './timeline';
import type { JobSpec } from './workload';

export interface WindowRow {
  window: string;
  scenario: string;
  graph: string;
  /** Tool body entries [flight, hotel, car] (echo: step entries). */
  entries: string;
  bookings: string;
  checkpointsBefore: number | null;
  checkpointsAfter: number | null;
  status: string;
  verdict: 'PASS' | 'FAIL';
  /** Expectations that failed, and remarks. */
  notes: string[];
}

export interface Observation {
  job: Job;
  events: JobEvent[];
  entries: string;
  bookings: string;
  checkpoints: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Lab {
  readonly submissions: Submissions;
  private keys = 0;

  constructor(readonly stack: Stack) {
    this.submissions = new Submissions(stack.client, () => Date.now() + 60_000);
  }

  /** A spec under a fresh key; `submit` sends it until answered. */
  spec(window: string, request: JobSpec['request']): JobSpec {
    return { index: this.keys, kind: 'echo', key: `matrix-${window}-${this.keys++}`, request, resume: false, concurrentDuplicate: false, resubmitAfter: false };
  }

  /** Submits until answered and returns the job id. */
  async submit(spec: JobSpec): Promise<string> {
    await this.submissions.submit(spec);
    const answer = this.submissions.answers.get(spec.key)?.[0];
    if (!answer) throw new Error(`submission ${spec.key} got no 202/200: ${JSON.stringify(this.submissions.refused)}`);
    return answer.jobId;
  }

  /** Jobs in the ledger under idempotency key `key`. */
  async jobsWithKey(key: string): Promise<Job[]> {
    return (await listAllJobs(this.stack.ledger)).filter((j) => j.idempotencyKey === key);
  }

  async until<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn().catch(() => undefined);
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await sleep(50);
    }
  }

  waitStatus(jobId: string, statuses: string[], timeoutMs = 30_000): Promise<Job> {
    return this.until(
      `${jobId} to reach ${statuses.join('|')}`,
      async () => {
        const j = await this.stack.ledger.get(jobId);
        return statuses.includes(j.status) ? j : undefined;
      },
      timeoutMs,
    );
  }

  waitEvent(jobId: string, what: string, pred: (e: JobEvent) => boolean, timeoutMs = 30_000): Promise<JobEvent> {
    return this.until(`${jobId}: ${what}`, async () => (await this.stack.ledger.events(jobId)).find(pred), timeoutMs);
  }

  /** Waits until the effects of `names` are committed. */
  waitCommitted(jobId: string, names: string[]): Promise<boolean> {
    return this.until(`${jobId}: ${names.join(', ')} committed`, async () => {
      const effects = await this.stack.ledger.effects(jobId);
      return names.every((n) => effects.some((f) => f.name === n && f.status === 'committed'));
    });
  }

  /** Checkpoints of a thread of the `default` tenant (the chaos stack runs open). */
  checkpoints(threadId: string): Promise<number> {
    return countThreadCheckpoints(this.stack.pool, 'default', threadId);
  }

  /** What the row shows for a job: entries, bookings, checkpoints, status. */
  async observe(jobId: string): Promise<Observation> {
    const job = await this.stack.ledger.get(jobId);
    const events = await this.stack.ledger.events(jobId);
    const checkpoints = await this.checkpoints(job.threadId);
    if (job.graph !== 'vacation') {
      const steps: Record<string, number> = {};
      for (const e of events) if (e.type === 'node_entered') steps[String(e.detail.node)] = (steps[String(e.detail.node)] ?? 0) + 1;
      const entries = Object.entries(steps)
        .map(([k, n]) => `${k} ${n}`)
        .join(' · ');
      return { job, events, entries, bookings: '-', checkpoints };
    }
    const e = toolEntries(events);
    const b = await new ExampleBookings(this.stack.pool).countBookings(jobId);
    return { job, events, entries: `[${e.flight},${e.hotel},${e.car}]`, bookings: `[${b.flight},${b.hotel},${b.car}]`, checkpoints };
  }

  /** Kills every worker (the producer stays) so the next window starts clean. */
  async reset(): Promise<void> {
    for (const slot of [...this.stack.workers.keys()]) {
      this.stack.workers.get(slot)?.kill('SIGCONT');
      await this.stack.stopWorker(slot, 'SIGKILL');
    }
  }
}

/** Builds a row: `checks` are [ok, what was expected]; a failed one fails the verdict. */
export function row(
  base: Pick<WindowRow, 'window' | 'scenario' | 'graph'>,
  obs: Observation | undefined,
  before: number | null,
  checks: Array<[boolean, string]>,
  remarks: string[] = [],
): WindowRow {
  const failed = checks.filter(([ok]) => !ok).map(([, what]) => `expected ${what}`);
  return {
    ...base,
    entries: obs?.entries ?? '-',
    bookings: obs?.bookings ?? '-',
    checkpointsBefore: before,
    checkpointsAfter: obs?.checkpoints ?? null,
    status: obs?.job.status ?? '-',
    verdict: failed.length === 0 ? 'PASS' : 'FAIL',
    notes: [...failed, ...remarks],
  };
}

export const VACATION = (input: Record<string, unknown> = {}) => ({ graph: 'vacation', input: { traceNodes: true, ...input } });
export const ECHO = (input: Record<string, unknown>) => ({ graph: 'echo', input: { traceNodes: true, ...input } });
export const hasEvent = (o: Observation, type: string, pred: (e: JobEvent) => boolean = () => true) => o.events.some((e) => e.type === type && pred(e));
