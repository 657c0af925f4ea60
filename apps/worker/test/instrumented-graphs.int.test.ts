// A worker process always runs its graphs through instrumentGraphs (spans, rejected-write
// metrics). The wrapper must not change what a run costs: a finished run's result is invoke's
// output, so its final state is not read back from PostgreSQL. Real worker in-process, real
// PostgreSQL and queue, the built-in echo graph.
import { MemorySaver } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { queriesDuring } from '../../../packages/ledger/test/support/observe';
import { loadGraphs } from '../../../packages/runtime/src/index';
import { type TestDb, testDb } from '../../../test/support/db';
import { queueConfigFor, submit, waitForStatus } from '../../../test/support/stack';
import { RunledgerWorker } from '../src/index';
import { instrumentGraphs } from '../src/telemetry-graphs';
import '../../../test/support/provided';

const backend = inject('redisUrl') ? 'redis' : 'postgres';

describe('instrumented graphs', () => {
  let db: TestDb;
  let worker: RunledgerWorker;
  let q: ReturnType<typeof queueConfigFor>;

  beforeAll(async () => {
    db = await testDb('instrumented');
    q = queueConfigFor(backend, db.url, db.schema, inject('redisUrl'));
    worker = new RunledgerWorker({
      ledger: db.ledger,
      queueConfig: q,
      graphs: instrumentGraphs(await loadGraphs(), {}),
      workerId: 'instrumented-worker',
      schema: db.schema,
      concurrency: 2,
    });
    await worker.start();
  });
  afterAll(async () => {
    await worker?.close();
    await db?.close();
  });

  it('pass on the compiled graph’s output channels', async () => {
    const [plain, wrapped] = [await loadGraphs(), instrumentGraphs(await loadGraphs(), {})].map((g) => g.get('echo')!.build(new MemorySaver()));
    expect(wrapped?.streamChannelsAsIs).toEqual(['steps', 'sleepMs', 'failTimes', 'traceNodes', 'done', 'log']);
    expect(wrapped?.streamChannelsAsIs).toEqual(plain?.streamChannelsAsIs);
  });

  it('complete a run with invoke’s output, without reading the final state back', async () => {
    let jobId = '';
    const sent = await queriesDuring(db.ledger.pool, async () => {
      const job = await submit(db.ledger, q, { graph: 'echo', input: { steps: 2 } });
      jobId = job.jobId;
      await waitForStatus(db.ledger, job.jobId, ['completed', 'failed']);
    });
    const done = await db.ledger.get(jobId);
    expect(done.status).toBe('completed');
    // The checkpoint saver's read (LangGraph's getTuple, the query getState sends): never during this run.
    expect(sent.filter((s) => /from\s+\S*checkpoints/i.test(s) && /^\s*select/i.test(s))).toEqual([]);
    expect(sent).toContain('runledger_end_attempt');
    // And the result is exactly the saved final state.
    const saved = await (await loadGraphs())
      .get('echo')!
      .build(new PostgresSaver(db.ledger.pool, undefined, { schema: db.schema }))
      .getState({ configurable: { thread_id: done.threadId } });
    expect(done.result).toEqual(JSON.parse(JSON.stringify(saved.values)));
  });
});
