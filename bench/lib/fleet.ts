// Worker processes on one schema and queue, and the batch measurement the throughput modules
// share: admit n jobs, deliver them, wait until every one has completed.
import type { AdmitRequest, Ledger } from '../../packages/ledger/src/index';
import { type openQueue, type QueueConfig, sendAdmitted } from '../../packages/queue/src/index';
import type { BenchSchema } from '../bench-schema';
import { type Proc, startWorker, stop } from './processes';
import { closeQueue, emptyQueue, readyQueue } from './queues';

const CHUNK = 500;
const POLL_MS = 20;

/** Admits the requests (issued together, so the ledger writes them in multi-row statements) and delivers them (one addBulk per chunk of 500). */
export async function admitAndDeliver(ledger: Ledger, queue: ReturnType<typeof openQueue>, requests: AdmitRequest[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < requests.length; i += CHUNK) {
    const jobs = (await Promise.all(requests.slice(i, i + CHUNK).map((r) => ledger.admit(r)))).map((r) => r.job);
    await sendAdmitted(queue, ledger, jobs);
    ids.push(...jobs.map((j) => j.jobId));
  }
  return ids;
}

/** Waits until `count` more jobs than `before` have completed; throws on a failed job or after `timeoutMs`. */
export async function waitCompleted(ledger: Ledger, before: number, count: number, timeoutMs = 300_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const byStatus = await ledger.countByStatus();
    if ((byStatus.failed ?? 0) > 0 || (byStatus.manual_reconcile ?? 0) > 0) throw new Error(`jobs failed: ${JSON.stringify(byStatus)}`);
    if ((byStatus.completed ?? 0) >= before + count) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${count} jobs: ${JSON.stringify(byStatus)}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** `processes` worker processes of `concurrency` each, consuming one queue into one schema. */
export class Fleet {
  private constructor(
    private readonly db: BenchSchema,
    readonly procs: Proc[],
    private readonly q: QueueConfig,
    readonly queue: ReturnType<typeof openQueue>,
  ) {}

  static async start(db: BenchSchema, q: QueueConfig, databaseUrl: string, processes: number, concurrency: number, extra: Record<string, string> = {}) {
    const procs = await Promise.all(
      Array.from({ length: processes }, (_, i) =>
        startWorker(q, databaseUrl, db.schema, `bench-${db.schema}-${i}`, { WORKER_CONCURRENCY: String(concurrency), ...extra }),
      ),
    );
    return new Fleet(db, procs, q, await readyQueue(q));
  }

  /**
   * Runs `count` jobs of `graph` end to end and returns runs per second: from before their
   * admission until the last one completed (admission, delivery, claim, run, completion).
   */
  async batch(count: number, graph: string, input: (n: number) => unknown): Promise<number> {
    const before = (await this.db.ledger.countByStatus()).completed ?? 0;
    const requests = Array.from({ length: count }, (_, n) => ({ graph, input: input(n) }));
    const t0 = performance.now();
    await admitAndDeliver(this.db.ledger, this.queue, requests);
    await waitCompleted(this.db.ledger, before, count);
    return count / ((performance.now() - t0) / 1000);
  }

  /** Drains every worker (SIGTERM) and closes the queue, emptying it. */
  async stop(): Promise<void> {
    await Promise.all(this.procs.map((p) => stop(p)));
    await closeQueue(this.queue);
    await emptyQueue(this.q);
  }
}
