// ledger.admit throughput next to the cheapest durable write PostgreSQL offers: a one-row
// INSERT commit of a row about as wide as a jobs row, in the same database and run, at the
// same concurrency. Target: admit ≥ 0.7× the INSERT at 16 connections.
// Two figures of ledger.admit: one call at a time (`coalesceAdmissions: false`: every call its
// own statement and commit, what the ledger did until 2026-11-30) and coalesced (the default:
// while 2 admission statements are in flight, further calls wait and go together as the next
// one; no timer). The baseline is unchanged: one single-row INSERT commit per call.
import { randomUUID } from 'node:crypto';
import { Ledger } from '../packages/ledger/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, holdAgainst, summarize, throughput } from './figures';

const TARGET_AT_16 = 0.7;

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const seconds = opts.full ? 10 : 2.5;
  const repeats = opts.full ? 5 : 3;
  const db = await benchSchema(opts, 'admit');
  try {
    const alone = new Ledger(db.pool, { coalesceAdmissions: false });
    const coalesced = db.ledger;
    const request = (n: number) => ({ graph: 'echo', input: { steps: 2, n } });
    const ONE = 'one call at a time: own statement and commit each';
    const CO = 'coalesced (default): concurrent calls share one statement and commit, ≤ 2 in flight, no timer';
    const variants: Record<string, { run: (n: number) => Promise<unknown>; at16Only?: boolean; note?: string }> = {
      insert: { run: db.insertPlainRow },
      admit: { run: (n) => alone.admit(request(n)), note: `${ONE}; no idempotency key` },
      coalesced: { run: (n) => coalesced.admit(request(n)), note: `${CO}; no idempotency key` },
      keyed: { run: (n) => alone.admit({ ...request(n), idempotencyKey: randomUUID() }), at16Only: true, note: `${ONE}; fresh key each time` },
      keyedCoalesced: {
        run: (n) => coalesced.admit({ ...request(n), idempotencyKey: randomUUID() }),
        at16Only: true,
        note: `${CO}; fresh key each time`,
      },
    };
    const figures: Figure[] = [];
    for (const concurrency of [1, 16]) {
      const active = Object.entries(variants).filter(([, v]) => concurrency === 16 || !v.at16Only);
      const samples = new Map<string, number[]>(active.map(([k]) => [k, []]));
      // Interleaved repeats, so drift (autovacuum, checkpoints, a busy neighbour) hits every variant alike.
      for (let r = 0; r < repeats; r++) {
        for (const [k, v] of active) samples.get(k)?.push(await throughput(concurrency, seconds * 1000, v.run));
      }
      const baseline = summarize(`one-row INSERT commit, ${concurrency} conn`, 'commits/s', samples.get('insert') ?? []);
      figures.push(baseline);
      const label: Record<string, string> = {
        admit: 'ledger.admit',
        coalesced: 'ledger.admit coalesced',
        keyed: 'ledger.admit with idempotency key',
        keyedCoalesced: 'ledger.admit coalesced with idempotency key',
      };
      for (const [k, v] of active) {
        if (k === 'insert') continue;
        const target = (k === 'admit' || k === 'coalesced') && concurrency === 16 ? TARGET_AT_16 : undefined;
        figures.push(holdAgainst(summarize(`${label[k]}, ${concurrency} conn`, 'admits/s', samples.get(k) ?? [], v.note), baseline, target));
      }
    }
    return figures;
  } finally {
    await db.drop();
  }
}
