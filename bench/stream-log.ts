// The LangGraph API's per-run stream log: which store, and what a run pays for it.
// 1. Appending a token-sized chunk (a messages-tuple chunk as the chat graph streams it, ~0.6 kB):
//    the PostgreSQL log (fenced INSERT … SELECT … FOR SHARE, one statement per batch) against
//    Redis Streams (XADD with MAXLEN ~ and EXPIRE, what a Redis log would need), one chunk per
//    round trip and 16 per round trip (the worker's writer batches what arrives while one is in flight).
// 2. Time per echo run (2 steps, durability "sync", fenced saver) through the worker's runGraph:
//    no stream request (invoke, what a run nobody streams pays) against a stream request for
//    values + updates (graph.stream, every chunk in the PostgreSQL log).
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { runGraph } from '../apps/worker/src/stream-run';
import { FencedPostgresSaver, RunStreamLog } from '../packages/ledger/src/index';
import { builtInGraphs, STREAM_REQUEST_KEY } from '../packages/runtime/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize } from './figures';

const echo = builtInGraphs.find((g) => g.name === 'echo')!;
const CHUNK = {
  event: 'messages',
  data: [
    {
      id: 'run-01a23232-6515-765b-870d-75cd75779de5',
      type: 'ai',
      content: 'Y',
      tool_calls: [],
      tool_call_chunks: [],
      additional_kwargs: {},
      response_metadata: {},
    },
    {
      tags: [],
      thread_id: 'c62b5931-c705-41cf-a0f8-1c75777360a2',
      ls_provider: 'FakeListChatModel',
      checkpoint_ns: 'reply:e30e8834-d97c-5d3a-8909-7170c49b13ac',
      ls_model_type: 'chat',
      langgraph_node: 'reply',
      langgraph_path: ['__pregel_pull', 'reply'],
      langgraph_step: 1,
      langgraph_triggers: ['branch:to:reply'],
      langgraph_checkpoint_ns: 'reply:e30e8834-d97c-5d3a-8909-7170c49b13ac',
    },
  ],
};

/** Chunks per second appending `total` chunks `batch` at a time, one round trip after another. */
async function chunksPerSecond(total: number, batch: number, append: (chunks: (typeof CHUNK)[]) => Promise<unknown>): Promise<number> {
  const chunks = Array.from({ length: batch }, () => CHUNK);
  const t0 = performance.now();
  for (let n = 0; n < total; n += batch) await append(chunks);
  return total / ((performance.now() - t0) / 1000);
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const repeats = size(opts, { smoke: 1, quick: 3, full: 5 });
  const total = size(opts, { smoke: 64, quick: 2_000, full: 10_000 });
  const runs = size(opts, { smoke: 3, quick: 60, full: 200 });
  const db = await benchSchema(opts, 'stream_log');
  const log = new RunStreamLog(db.pool);
  const redis = opts.redisUrl ? new Redis(opts.redisUrl) : undefined;
  const samples: Record<string, number[]> = {};
  const add = (name: string, v: number) => {
    samples[name] = [...(samples[name] ?? []), v];
  };
  try {
    for (let r = 0; r < repeats; r++) {
      const { job } = await db.ledger.admit({ graph: 'chat', input: {} });
      const claim = await db.ledger.claim(job.jobId, 'bench', 600_000);
      if (!claim.ok) throw new Error('claim refused');
      for (const batch of [1, 16]) add(`pg-${batch}`, await chunksPerSecond(total, batch, (c) => log.append(job.jobId, 1, c)));
      if (redis) {
        const key = `bench:stream:${randomUUID()}`;
        for (const batch of [1, 16])
          add(
            `redis-${batch}`,
            await chunksPerSecond(total, batch, (c) => {
              const p = redis.multi();
              for (const chunk of c) p.xadd(key, 'MAXLEN', '~', '10000', '*', 'event', chunk.event, 'data', JSON.stringify(chunk.data));
              return p.expire(key, 3600).exec();
            }),
          );
        await redis.del(key);
      }
      for (const streamed of [false, true]) {
        let ms = 0;
        for (let i = 0; i < runs; i++) {
          const metadata = streamed ? { [STREAM_REQUEST_KEY]: { modes: ['values', 'updates'], subgraphs: false } } : {};
          const admitted = await db.ledger.admit({ graph: 'echo', input: { steps: 2 }, metadata });
          const c = await db.ledger.claim(admitted.job.jobId, 'bench', 600_000);
          if (!c.ok) throw new Error('claim refused');
          const t0 = performance.now();
          const saver = new FencedPostgresSaver(db.ledger, { jobId: c.job.jobId, fencingToken: c.job.fencingToken }, { schema: db.schema });
          const runledger = {
            jobId: c.job.jobId,
            threadId: c.job.threadId,
            fencingToken: c.job.fencingToken,
            attempt: 1,
            ledger: db.ledger,
            signal: new AbortController().signal,
          };
          await runGraph(db.ledger, c.job, echo.build(saver), { steps: 2 }, { configurable: { thread_id: c.job.threadId, runledger }, durability: 'sync' });
          ms += performance.now() - t0;
        }
        add(streamed ? 'run-streamed' : 'run-invoke', ms / runs);
      }
    }
  } finally {
    redis?.disconnect();
    await db.drop();
  }
  const figures: Figure[] = [];
  const pg1 = summarize('stream log on PostgreSQL: chunks/s, 1 per statement', 'chunks/s', samples['pg-1']!);
  figures.push(pg1, summarize('stream log on PostgreSQL: chunks/s, 16 per statement', 'chunks/s', samples['pg-16']!));
  if (samples['redis-1']) {
    figures.push(holdAgainst(summarize('Redis Streams XADD: chunks/s, 1 per round trip', 'chunks/s', samples['redis-1']), pg1));
    figures.push(summarize('Redis Streams XADD: chunks/s, 16 per round trip', 'chunks/s', samples['redis-16']!));
  }
  const invoke = summarize('echo run, nobody streams (invoke)', 'ms/run', samples['run-invoke']!);
  figures.push(invoke, holdAgainst(summarize('echo run streamed (values + updates in the log)', 'ms/run', samples['run-streamed']!), invoke));
  return figures;
}
