// The harness as a backend service: submits through the HTTP API with RunledgerClient, retrying
// a submission that got no answer under the same idempotency key, and resumes parked approvals.
import { RunledgerApiError, type RunledgerClient, type SubmitRequest } from '../packages/client/src/index';
import type { Ledger } from '../packages/ledger/src/index';
import { conflictingRequest, type JobSpec } from './workload';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Answer {
  status: 200 | 202;
  jobId: string;
}

/** Every answer the producer gave, per idempotency key. An admission counts as accepted only with a 202 or 200. */
export class Submissions {
  readonly answers = new Map<string, Answer[]>();
  /** How long each answered submission call took, ms (the one that was answered, not its retries). */
  readonly admissionMs: number[] = [];
  readonly specs = new Map<string, JobSpec>();
  /** Submissions refused with an unexpected 4xx, or never answered before the deadline. */
  readonly refused: Array<{ key: string; status: number; code: string }> = [];
  readonly gaveUp: string[] = [];
  /** Tries that got no answer (producer down or killed) and were sent again with the same key. */
  retries = 0;
  readonly conflicts = { sent: 0, refused409: 0, unexpected: [] as Array<{ key: string; status: number }> };

  constructor(
    private readonly client: RunledgerClient,
    private readonly deadline: () => number,
  ) {}

  /** Submits `spec` until it is answered (202/200) or refused; retries keep the key. */
  async submit(spec: JobSpec): Promise<void> {
    this.specs.set(spec.key, spec);
    const sends = spec.concurrentDuplicate ? [this.send(spec, spec.request), this.send(spec, spec.request)] : [this.send(spec, spec.request)];
    await Promise.all(sends);
  }

  private async send(spec: JobSpec, request: SubmitRequest): Promise<void> {
    for (;;) {
      try {
        const sent = performance.now();
        const a = await this.client.submit({ ...request, idempotencyKey: spec.key });
        this.admissionMs.push(performance.now() - sent);
        const list = this.answers.get(spec.key) ?? [];
        list.push({ status: a.created ? 202 : 200, jobId: a.jobId });
        this.answers.set(spec.key, list);
        return;
      } catch (err) {
        if (err instanceof RunledgerApiError && !err.retryable) {
          this.refused.push({ key: spec.key, status: err.status, code: err.code });
          return;
        }
        if (Date.now() > this.deadline()) {
          this.gaveUp.push(spec.key);
          return;
        }
        this.retries++;
        await sleep(300);
      }
    }
  }

  /** Same key, same body again: must answer 200 with the first job. */
  resubmit(spec: JobSpec): Promise<void> {
    return this.send(spec, spec.request);
  }

  /** Same key, another body: must answer 409. */
  async sendConflict(spec: JobSpec): Promise<void> {
    this.conflicts.sent++;
    for (;;) {
      try {
        await this.client.submit({ ...conflictingRequest(spec), idempotencyKey: spec.key });
        this.conflicts.unexpected.push({ key: spec.key, status: 200 });
        return;
      } catch (err) {
        if (err instanceof RunledgerApiError && err.status === 409) {
          this.conflicts.refused409++;
          return;
        }
        if (err instanceof RunledgerApiError && !err.retryable) {
          this.conflicts.unexpected.push({ key: spec.key, status: err.status });
          return;
        }
        if (Date.now() > this.deadline()) return;
        await sleep(300);
      }
    }
  }

  /** The job each accepted key names (its first answer) with the spec. */
  accepted(): Map<string, JobSpec> {
    const out = new Map<string, JobSpec>();
    for (const [key, list] of this.answers) {
      const spec = this.specs.get(key);
      if (list[0] && spec) out.set(list[0].jobId, spec);
    }
    return out;
  }
}

/** Resumes approvals that parked, when their spec says so, until stopped. */
export class ApprovalResumer {
  resumed = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly ledger: Ledger,
    private readonly client: RunledgerClient,
    private readonly submissions: Submissions,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.once().catch(() => {});
      await sleep(400);
    }
  }

  private async once(): Promise<void> {
    const accepted = this.submissions.accepted();
    const { jobs } = await this.ledger.list({ status: 'interrupted', graph: 'approval', limit: 500 });
    for (const job of jobs) {
      if (!accepted.get(job.jobId)?.resume) continue;
      try {
        await this.client.resume(job.jobId, { approved: true });
        this.resumed++;
      } catch {
        // Producer down or already resumed (409): the next round looks again.
      }
    }
  }
}
