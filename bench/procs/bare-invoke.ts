// The end-to-end baseline: the echo graph compiled with LangGraph's own (unfenced) PostgresSaver,
// invoked in a loop at a fixed concurrency, with nothing around it (no ledger, no queue, no lease).
// Driven over stdin: `run <count>` answers one JSON line { runsPerSecond }.
// Env: DATABASE_URL, DB_SCHEMA (migrated), CONCURRENCY (default 16).
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { createPool } from '../../packages/ledger/src/index';
import { builtInGraphs } from '../../packages/runtime/src/index';

const schema = process.env.DB_SCHEMA ?? 'public';
const concurrency = Number(process.env.CONCURRENCY ?? 16);
// The same pool size a worker process of this concurrency opens.
const pool = createPool({ connectionString: process.env.DATABASE_URL ?? '', schema, max: concurrency + 4 });
const echo = builtInGraphs.find((g) => g.name === 'echo');
if (!echo) throw new Error('no echo graph');
const graph = echo.build(new PostgresSaver(pool, undefined, { schema }));

/** One run on a fresh thread; echo's step reads the attempt from the run context, so give it one. */
async function runOnce(): Promise<void> {
  const threadId = randomUUID();
  const runledger = { jobId: threadId, threadId, fencingToken: 1, attempt: 1, signal: new AbortController().signal };
  await graph.invoke({ steps: 2 }, { configurable: { thread_id: threadId, runledger }, durability: 'sync', recursionLimit: 10_000 });
}

async function runMany(count: number): Promise<number> {
  let started = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < count) {
        started++;
        await runOnce();
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

let warm = false;
for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, arg] = line.trim().split(/\s+/);
  try {
    if (cmd !== 'run') throw new Error(`unknown command ${cmd}`);
    if (!warm) await runMany(concurrency * 4);
    warm = true;
    process.stdout.write(`${JSON.stringify({ runsPerSecond: await runMany(Number(arg)) })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ error: (err as Error).message })}\n`);
  }
}
await pool.end();
