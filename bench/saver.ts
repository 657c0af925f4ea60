// Time per run of the echo graph (2 steps, durability "sync") with the FencedPostgresSaver the
// worker uses, held against LangGraph's unfenced PostgresSaver, in this process. Each run builds
// its saver and graph (the worker builds them per attempt) and invokes on a fresh thread; the
// fenced runs each hold a claimed job's lease (claimed beforehand, not timed). Mean time per run
// at concurrency 1 and 16, repeats alternating, with the CPU per run on each side of the wire.
// Target: ≤ 1.10× the unfenced saver. A third saver, ThreadSaver (the fenced saver's
// own one-statement writes without the fence), splits that ratio in two: the gain of writing a
// put or putWrites in one round trip, and what the fence itself costs on top of it.
import { randomUUID } from 'node:crypto';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { FencedPostgresSaver, Ledger } from '../packages/ledger/src/index';
import { ThreadSaver } from '../packages/ledger/src/thread-saver';
import { builtInGraphs } from '../packages/runtime/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, size, summarize } from './figures';
import { cpuDuring, postgresPids } from './lib/cpu';

const TARGET = 1.1;
const echo = builtInGraphs.find((g) => g.name === 'echo')!;

interface Run {
  threadId: string;
  jobId: string;
  token: number;
  saver(): BaseCheckpointSaver;
}

/** Mean milliseconds per run over `runs`, `concurrency` at a time. */
async function meanRunMs(runs: Run[], concurrency: number): Promise<number> {
  let next = 0;
  let total = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let run = runs[next++]; run; run = runs[next++]) {
        const t0 = performance.now();
        const graph = echo.build(run.saver());
        const runledger = { jobId: run.jobId, threadId: run.threadId, fencingToken: run.token, attempt: 1, signal: new AbortController().signal };
        await graph.invoke({ steps: 2 }, { configurable: { thread_id: run.threadId, runledger }, durability: 'sync' });
        total += performance.now() - t0;
      }
    }),
  );
  return total / runs.length;
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const repeats = size(opts, { smoke: 1, quick: 3, full: 5 });
  const db = await benchSchema(opts, 'saver');
  // Long leases: the runs are claimed before the timed part starts.
  const ledger = new Ledger(db.pool, { leaseTtlMs: 30 * 60_000 });
  try {
    const unfencedWith =
      (saver: () => BaseCheckpointSaver) =>
      (count: number): Run[] =>
        Array.from({ length: count }, () => {
          const threadId = randomUUID();
          return { threadId, jobId: threadId, token: 1, saver };
        });
    const unfenced = unfencedWith(() => new PostgresSaver(db.pool, undefined, { schema: db.schema }));
    const oneStatement = unfencedWith(() => new ThreadSaver(db.pool, { schema: db.schema }));
    const fenced = async (count: number): Promise<Run[]> => {
      const admitted = await Promise.all(Array.from({ length: count }, () => ledger.admit({ graph: 'echo', input: { steps: 2 } })));
      const runs: Run[] = [];
      for (const a of admitted) {
        const claim = await ledger.claim(a.job.jobId, 'bench-saver');
        if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
        const { jobId, threadId, fencingToken: token } = claim.job;
        runs.push({ jobId, threadId, token, saver: () => new FencedPostgresSaver(ledger, { jobId, fencingToken: token }, { schema: db.schema }) });
      }
      return runs;
    };
    const figures: Figure[] = [];
    for (const concurrency of [1, 16]) {
      const count = concurrency === 1 ? size(opts, { smoke: 20, quick: 150, full: 600 }) : size(opts, { smoke: 48, quick: 400, full: 2_000 });
      await meanRunMs(unfenced(concurrency * 2), concurrency); // warm-up
      const plain: number[] = [];
      const batched: number[] = [];
      const fencedMs: number[] = [];
      const sides = () => ({ client: [] as number[], server: [] as number[] });
      const cpu = { plain: sides(), batched: sides(), fenced: sides() };
      const measure = async (runs: Run[], into: { client: number[]; server: number[] }) => {
        const m = await cpuDuring({ server: await postgresPids(opts.databaseUrl) }, () => meanRunMs(runs, concurrency));
        into.client.push((m.ms.bench ?? 0) / runs.length);
        into.server.push((m.ms.server ?? 0) / runs.length);
        return m.result;
      };
      for (let r = 0; r < repeats; r++) {
        plain.push(await measure(unfenced(count), cpu.plain));
        batched.push(await measure(oneStatement(count), cpu.batched));
        fencedMs.push(await measure(await fenced(count), cpu.fenced));
      }
      const note = `${count} runs per repeat; saver and graph built per run`;
      const baseline = summarize(`unfenced PostgresSaver, c=${concurrency}`, 'ms/run', plain, note);
      const oneStmt = holdAgainst(summarize(`unfenced ThreadSaver, c=${concurrency}`, 'ms/run', batched, note), baseline);
      const fencedFig = summarize(`FencedPostgresSaver, c=${concurrency}`, 'ms/run', fencedMs, note);
      // The fence's own cost: the same one-statement writes with and without it.
      const fenceCost = holdAgainst({ ...fencedFig, name: `FencedPostgresSaver, c=${concurrency} (fence cost)` }, oneStmt);
      figures.push(baseline, oneStmt, holdAgainst(fencedFig, baseline, TARGET, 'lower'), fenceCost);
      for (const side of ['client', 'server'] as const) {
        const what = side === 'client' ? 'CPU per run in this process' : 'PostgreSQL server CPU per run';
        const base = summarize(`unfenced PostgresSaver, c=${concurrency}: ${what}`, 'ms', cpu.plain[side]);
        const one = holdAgainst(summarize(`unfenced ThreadSaver, c=${concurrency}: ${what}`, 'ms', cpu.batched[side]), base);
        const fen = summarize(`FencedPostgresSaver, c=${concurrency}: ${what}`, 'ms', cpu.fenced[side]);
        figures.push(base, one, holdAgainst(fen, base), holdAgainst({ ...fen, name: `FencedPostgresSaver, c=${concurrency}: ${what} (fence cost)` }, one));
      }
    }
    return figures;
  } finally {
    await db.drop();
  }
}
