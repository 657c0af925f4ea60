// Worker metrics scraped from a real /metrics port while an in-process worker recovers jobs:
// a fake dead worker's expired lease (replay), a failed attempt (resume), and a cancelled run
// whose next checkpoint is refused (lease loss, fenced write rejected). Real PostgreSQL and queue.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Ledger } from '../../../packages/ledger/src/index';
import { loadGraphs } from '../../../packages/runtime/src/index';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { queueConfigFor, submit, waitForStatus } from '../../../test/support/stack';
import { RunledgerWorker } from '../src/index';
import { startMetricsServer } from '../src/metrics-server';
import { RetentionTask } from '../src/retention';
import { createObservability, type Observability } from '../src/telemetry-wiring';
import '../../../test/support/provided';

const backend = inject('redisUrl') ? 'redis' : 'postgres';

/** The value of one sample in Prometheus text (labels given in their exposition order), or 0 when absent. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

interface Running {
  worker: RunledgerWorker;
  obs: Observability;
  scrape(): Promise<string>;
  close(): Promise<void>;
}

/** A worker with its observability wired as main.ts wires it, and its registry on a real port. */
async function startWorker(ledger: Ledger, db: TestDb, q: ReturnType<typeof queueConfigFor>, id: string, heartbeatMs?: number): Promise<Running> {
  const obs = await createObservability({ ledger, log: () => {}, metricsPort: 0 });
  const worker = new RunledgerWorker({
    ledger,
    queueConfig: q,
    graphs: obs.graphs(await loadGraphs()),
    workerId: id,
    schema: db.schema,
    concurrency: 4,
    sweepIntervalMs: 100,
    redeliverGraceMs: 500,
    heartbeatMs,
    aroundDelivery: obs.aroundDelivery,
    onOutcome: obs.onOutcome,
  });
  await worker.start();
  await obs.start(worker);
  const server = await startMetricsServer(obs.metrics.registry, 0, '127.0.0.1');
  return {
    worker,
    obs,
    scrape: async () => {
      const r = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(r.headers.get('content-type')).toContain('text/plain');
      return r.text();
    },
    close: async () => {
      await server.close();
      await worker.close();
      await obs.close();
    },
  };
}

let db: TestDb;
let q: ReturnType<typeof queueConfigFor>;
beforeAll(async () => {
  // 3 s, not 1 s: on a loaded machine a 1 s lease ran out between heartbeats and a run counted two attempts.
  db = await testDb('worker_metrics', { leaseTtlMs: 3_000 });
  q = queueConfigFor(backend, db.url, db.schema, inject('redisUrl'));
});
afterAll(() => db?.close());

describe(`worker metrics (${backend} queue)`, () => {
  let w: Running;
  beforeAll(async () => {
    w = await startWorker(db.ledger, db, q, 'metrics-worker');
  });
  afterAll(() => w?.close());

  it('counts a replay after a dead worker’s lease expires, with its recovery time', async () => {
    const before = await w.scrape();
    const { job } = await db.ledger.admit({ graph: 'echo', input: { steps: 2 } });
    // A worker that claims and dies at once: nothing delivered, the lease runs out by the database clock.
    const dead = await db.ledger.claim(job.jobId, 'dead-worker', 200);
    expect(dead.ok).toBe(true);
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed'], 20_000);
    expect(done.status).toBe('completed');
    const after = await waitFor('recovery time observed', async () => {
      const text = await w.scrape();
      return sample(text, 'runledger_recovery_duration_seconds_count') > sample(before, 'runledger_recovery_duration_seconds_count') && text;
    });
    expect(sample(after, 'runledger_recoveries_total', 'decision="replay"') - sample(before, 'runledger_recoveries_total', 'decision="replay"')).toBe(1);
    expect(sample(after, 'runledger_attempts_total') - sample(before, 'runledger_attempts_total')).toBe(1);
    expect(sample(after, 'runledger_job_transitions_total', 'to="completed"') - sample(before, 'runledger_job_transitions_total', 'to="completed"')).toBe(1);
    expect(sample(after, 'runledger_queue_wait_seconds_count')).toBeGreaterThan(sample(before, 'runledger_queue_wait_seconds_count'));
    expect(sample(after, 'runledger_run_duration_seconds_count', 'outcome="completed"')).toBeGreaterThan(0);
    expect(after).toMatch(/^runledger_heartbeat_lag_seconds \d/m);
    expect(after).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('counts a retry and the resume that follows it', async () => {
    const before = await w.scrape();
    const job = await submit(db.ledger, q, { graph: 'echo', input: { failTimes: 1 } });
    expect((await waitForStatus(db.ledger, job.jobId, ['completed', 'failed'])).status).toBe('completed');
    const after = await waitFor('two deliveries counted', async () => {
      const text = await w.scrape();
      return sample(text, 'runledger_attempts_total') - sample(before, 'runledger_attempts_total') >= 2 && text;
    });
    expect(sample(after, 'runledger_deliveries_total', 'outcome="retry"') - sample(before, 'runledger_deliveries_total', 'outcome="retry"')).toBe(1);
    expect(sample(after, 'runledger_recoveries_total', 'decision="resume"') - sample(before, 'runledger_recoveries_total', 'decision="resume"')).toBe(1);
    expect(sample(after, 'runledger_job_transitions_total', 'to="recovery_required"')).toBeGreaterThanOrEqual(1);
  });

  it('counts one refused claim for a job waiting behind a running job of its thread, however long it waits', async () => {
    const refused = (t: string) => sample(t, 'runledger_claims_refused_total', 'reason="thread_busy"');
    const before = refused(await w.scrape());
    const threadId = 'metrics-thread-busy';
    const first = await submit(db.ledger, q, { graph: 'echo', input: { steps: 1, sleepMs: 2_000 }, threadId });
    await waitForStatus(db.ledger, first.jobId, ['running']);
    const second = await submit(db.ledger, q, { graph: 'echo', input: { steps: 1 }, threadId });
    await waitFor('the refused claim counted', async () => refused(await w.scrape()) > before);
    // Many sweeps pass (every 100 ms, 500 ms grace) while the first job runs on.
    await waitForStatus(db.ledger, first.jobId, ['completed']);
    expect((await waitForStatus(db.ledger, second.jobId, ['completed'])).status).toBe('completed');
    expect(refused(await w.scrape()) - before).toBe(1);
  });
});

describe('lease loss and fenced writes', () => {
  it('counts the lost lease and the checkpoint write the fenced saver refused', async () => {
    // Long lease and no heartbeat in time: the cancel is only noticed when the next checkpoint is refused.
    const ledger = new Ledger(db.ledger.pool, { leaseTtlMs: 60_000 });
    const w = await startWorker(ledger, db, q, 'fenced-worker', 60_000);
    try {
      const job = await submit(ledger, q, { graph: 'echo', input: { steps: 2, sleepMs: 800 } });
      await waitForStatus(ledger, job.jobId, ['running']);
      await ledger.cancel(job.jobId, undefined, 'metrics test');
      const text = await waitFor('lease loss counted', async () => {
        const t = await w.scrape();
        return sample(t, 'runledger_lease_losses_total') >= 1 && t;
      });
      expect(sample(text, 'runledger_fenced_writes_rejected_total', 'source="checkpoint"')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'runledger_deliveries_total', 'outcome="lease_lost"')).toBe(1);
      expect((await ledger.get(job.jobId)).status).toBe('cancelled');
    } finally {
      await w.close();
    }
  });
});

describe('retention task', () => {
  it("deletes an old finished thread's job (RETENTION_JOBS=delete, the default), keeps one under keep, and counts what it removed", async () => {
    const w = await startWorker(db.ledger, db, q, 'retention-worker');
    const finishedLongAgo = async () => {
      const job = await submit(db.ledger, q, { graph: 'echo', input: { steps: 2 } });
      expect((await waitForStatus(db.ledger, job.jobId, ['completed'])).status).toBe('completed');
      await db.ledger.pool.query("UPDATE jobs SET completed_at = now() - interval '10 days' WHERE job_id = $1", [job.jobId]);
      return job.jobId;
    };
    const exists = async (jobId: string) => (await db.ledger.pool.query('SELECT 1 FROM jobs WHERE job_id = $1', [jobId])).rowCount === 1;
    try {
      const gone = await finishedLongAgo();
      const task = new RetentionTask(db.ledger, { olderThanDays: 7, onReport: (r) => w.obs.metrics.observeRetention(r) });
      const report = await task.runOnce();
      expect(report).toMatchObject({ threads: 1, jobs: 1, jobsDeleted: 1, complete: true });
      expect(report!.checkpoints).toBeGreaterThan(0);
      let text = await w.scrape();
      expect(sample(text, 'runledger_retention_removed_total', 'table="checkpoints"')).toBe(report!.checkpoints);
      expect(sample(text, 'runledger_retention_removed_total', 'table="jobs"')).toBe(1);
      expect(await exists(gone)).toBe(false);
      // Its events are today's: they leave with their day's partition, not with the job.
      expect(report!.jobEvents).toBe(0);
      expect((await db.ledger.events(gone)).length).toBeGreaterThan(0);
      await task.stop();

      const kept = await finishedLongAgo();
      const keeping = new RetentionTask(db.ledger, { olderThanDays: 7, jobs: 'keep', onReport: (r) => w.obs.metrics.observeRetention(r) });
      expect(await keeping.runOnce()).toMatchObject({ threads: 1, jobs: 1, jobsDeleted: 0 });
      expect(await db.ledger.get(kept)).toMatchObject({ status: 'completed', result: { done: 2 } });
      text = await w.scrape();
      expect(sample(text, 'runledger_retention_removed_total', 'table="jobs"')).toBe(1);
      await keeping.stop();
    } finally {
      await w.close();
    }
  });
});
