// What Bull Board shows of a delivery, on both queue backends: the run's ledger timeline as its
// log, its steps and effects as its progress, its outcome as a readable return value (a refused
// delivery says it did not run), and a queue that fails these writes never fails the run.
import { Job as BullJob } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type DeliveryData, deliver, openQueue } from '../../../packages/queue/src/index';
import { loadGraphs } from '../../../packages/runtime/src/index';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { queueConfigFor, submit, waitForStatus } from '../../../test/support/stack';
import { DeliveryView } from '../src/delivery-view';
import { RunledgerWorker } from '../src/index';
import '../../../test/support/provided';

const backends = (['redis', 'postgres'] as const).filter((b) => b === 'postgres' || inject('redisUrl'));

describe.each(backends)('a delivery as Bull Board shows it, on the %s backend', (backend) => {
  let db: TestDb;
  let q: ReturnType<typeof queueConfigFor>;
  let worker: RunledgerWorker;
  let queue: ReturnType<typeof openQueue>;

  beforeAll(async () => {
    db = await testDb(`delivery_view_${backend}`);
    q = queueConfigFor(backend, db.url, db.schema, inject('redisUrl'));
    worker = new RunledgerWorker({ ledger: db.ledger, queueConfig: q, graphs: await loadGraphs(), workerId: `view-${backend}`, schema: db.schema });
    await worker.start();
    queue = openQueue(q);
  });
  afterAll(async () => {
    await worker?.close();
    await queue?.close();
    await db?.close();
  });

  /** The kept delivery once its worker finished it (the view's last write comes just before). */
  const finishedDelivery = (id: string) =>
    waitFor(`delivery ${id} to finish`, async () => {
      const d = await queue.getJob(id);
      return d?.finishedOn ? d : undefined;
    });

  it('logs the timeline as it happens, counts steps and effects, and returns the outcome', async () => {
    const job = await submit(db.ledger, q, { graph: 'vacation', input: { traceNodes: true, note: 'PAYLOAD-stays-in-postgres' } });
    expect((await waitForStatus(db.ledger, job.jobId, ['completed', 'failed'])).status).toBe('completed');
    const delivery = await finishedDelivery(job.jobId);
    expect(delivery.name).toBe('vacation');
    expect(delivery.data).toMatchObject({ jobId: job.jobId, graph: 'vacation', attempt: 1, delivery: 0 });
    expect(delivery.returnvalue).toMatchObject({ outcome: 'completed', decision: 'start', summary: 'ran: the job completed' });
    const progress = delivery.progress as { stage: string; attempt: number; steps: number; effects: { started: number; settled: number } };
    expect(progress).toMatchObject({ stage: 'completed', attempt: 1, effects: { started: 3, settled: 3 } });
    expect(progress.steps).toBeGreaterThan(1);
    const { logs } = await queue.getJobLogs(job.jobId);
    const lines = logs.join('\n');
    expect(lines).toMatch(/claimed: attempt 1, fencing token 1/);
    for (const effect of ['flight', 'hotel', 'car']) expect(lines).toMatch(new RegExp(`effect started: \\S*${effect}`, 'i'));
    expect(lines).toMatch(/effect committed/);
    expect(lines.trim().split('\n').at(-1)).toMatch(/ completed$/);
    expect(JSON.stringify([delivery.data, delivery.returnvalue, delivery.progress, logs])).not.toContain('PAYLOAD');
    // A duplicate delivery of the finished job: refused by the ledger, and it says so.
    const again = await deliver(queue, db.ledger, await db.ledger.get(job.jobId));
    const refused = await finishedDelivery(again);
    expect(refused.name).toBe('vacation (redelivery 1)');
    expect(refused.returnvalue).toMatchObject({ outcome: 'refused', reason: 'terminal' });
    expect(refused.returnvalue.summary).toBe('not run: the ledger refused the claim (terminal); this delivery had nothing to do');
  });

  it('finishes a delivery refused for a busy thread as not run, naming the job that holds it', async () => {
    const threadId = `view-busy-${backend}`;
    const park = await submit(db.ledger, q, { graph: 'approval', input: { request: 'hold' }, threadId });
    expect((await waitForStatus(db.ledger, park.jobId, ['interrupted', 'failed'])).status).toBe('interrupted');
    const waiting = await submit(db.ledger, q, { graph: 'echo', input: {}, threadId });
    const delivery = await finishedDelivery(waiting.jobId);
    expect(delivery.name).toBe('echo');
    expect(delivery.returnvalue).toMatchObject({ outcome: 'refused', reason: 'thread_busy', blockedBy: park.jobId });
    expect(delivery.returnvalue.summary).toMatch(new RegExp(`^not run: job ${park.jobId} holds the thread`));
    expect((await queue.getJobLogs(waiting.jobId)).logs.join('\n')).toMatch(`waiting_for_thread: blocked by ${park.jobId}`);
    expect((await db.ledger.get(waiting.jobId)).status).toBe('accepted');
  });

  it('never fails the run when the queue cannot be reached: the view drops its writes within its bound', async () => {
    const dead: typeof q = backend === 'redis' ? { ...q, redisUrl: 'redis://127.0.0.1:1' } : { ...q, databaseUrl: 'postgres://postgres@127.0.0.1:1/test' };
    const unreachable = openQueue(dead);
    unreachable.on('error', () => {});
    try {
      const delivery = new BullJob<DeliveryData>(unreachable, 'echo', { jobId: 'j' }, {}, 'j');
      const view = new DeliveryView(delivery, 10);
      view.note('claimed: attempt 1');
      const t0 = Date.now();
      await expect(view.finish({ outcome: 'completed' }, 1_500)).resolves.toBeUndefined();
      expect(Date.now() - t0).toBeLessThan(3_000);
      // Either refused at once or still pending when the bound passed: never thrown at the run.
      if (Date.now() - t0 < 1_400) expect(view.failedWrites).toBeGreaterThan(0);
    } finally {
      await unreachable.close().catch(() => {});
    }
  });
});
