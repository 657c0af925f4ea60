// A crash after a step's task writes were saved but before that step's checkpoint: LangGraph's
// state then shows `next: []` with the task still pending. Found by the chaos harness; the job
// must be resumed, never recorded completed without having run.
import type { Checkpoint, CheckpointMetadata } from '@langchain/langgraph-checkpoint';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { FencedPostgresSaver } from '../../../packages/ledger/src/index';
import { deliver, openQueue } from '../../../packages/queue/src/index';
import { builtInGraphs, loadGraphs, type RunContext } from '../../../packages/runtime/src/index';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { nodeEntries, queueConfigFor, waitForStatus } from '../../../test/support/stack';
import { RunledgerWorker } from '../src/index';
import '../../../test/support/provided';

/** A fenced saver whose `dieAt`-th checkpoint write never happens (it hangs), as if the process died right before it. */
class DiesBeforeCheckpoint extends FencedPostgresSaver {
  private puts = 0;
  dieAt = 0;
  override put(
    config: Parameters<FencedPostgresSaver['put']>[0],
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    versions: Record<string, string | number>,
  ) {
    this.puts++;
    if (this.puts === this.dieAt) return new Promise<never>(() => {});
    return super.put(config, checkpoint, metadata, versions);
  }
}

let db: TestDb;
beforeAll(async () => {
  db = await testDb('recovery_pending_tasks');
});
afterAll(() => db?.close());

// Put 2 is step 0's checkpoint (after __start__'s writes); put 3 is step 1's (after the first step's).
it.each([2, 3])('resumes a job whose step saved its task writes but not checkpoint number %i', async (dieAt) => {
  const { job } = await db.ledger.admit({ graph: 'echo', input: { steps: 2, traceNodes: true } });
  const claim = await db.ledger.claim(job.jobId, 'doomed-worker', 2_000);
  if (!claim.ok) throw new Error('claim refused');
  const token = claim.job.fencingToken;
  const saver = new DiesBeforeCheckpoint(db.ledger, { jobId: job.jobId, fencingToken: token }, { schema: db.schema });
  saver.dieAt = dieAt;
  const ctx: RunContext = {
    jobId: job.jobId,
    threadId: job.threadId,
    fencingToken: token,
    attempt: 1,
    ledger: db.ledger,
    signal: new AbortController().signal,
  };
  const graph = builtInGraphs.find((g) => g.name === 'echo')!.build(saver);
  // The run hangs at its second checkpoint; the task writes before it are saved meanwhile.
  void graph.invoke(job.input, { configurable: { thread_id: job.threadId, runledger: ctx }, durability: 'sync' }).catch(() => {});
  // The state is read once the task's writes are all saved: LangGraph may save them in more than
  // one call, and between two of them (seen under load) the task still shows as `next`.
  // The wait fails unless the state reaches `next: []` with the task pending: what misled the old recovery decision.
  const state = await waitFor('the task writes to be saved and next: []', async () => {
    if (!(await saver.getTuple({ configurable: { thread_id: job.threadId } }))?.pendingWrites?.length) return undefined;
    const read = await graph.getState({ configurable: { thread_id: job.threadId } });
    return read.next.length === 0 ? read : undefined;
  });
  expect(state.tasks.length).toBeGreaterThan(0);

  const q = queueConfigFor(inject('redisUrl') ? 'redis' : 'postgres', db.url, db.schema, inject('redisUrl'));
  const worker = new RunledgerWorker({ ledger: db.ledger, queueConfig: q, graphs: await loadGraphs(), workerId: 'survivor', schema: db.schema });
  await worker.start();
  try {
    await new Promise((r) => setTimeout(r, 400)); // the doomed worker's lease expires
    const queue = openQueue(q);
    await deliver(queue, db.ledger, { jobId: job.jobId, deliveries: (await db.ledger.get(job.jobId)).deliveries });
    await queue.close();
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed']);
    expect(done.result).toMatchObject({ done: 2 });
    expect((await db.ledger.events(job.jobId)).map((e) => e.type)).toContain('resumed');
    expect(await nodeEntries(db.ledger, job.jobId)).toEqual({ step1: 1, step2: 1 });
  } finally {
    await worker.close();
  }
});
