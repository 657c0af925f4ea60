// `npm run chaos -- --matrix`: crash windows A–M of ARCHITECTURE.md, Failure → behaviour as a lab table, each a real
// scenario with real processes on the harness's own PostgreSQL and Redis.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ChaosPostgres, ChaosRedis, scratchDir } from './infra';
import { Lab, type WindowRow } from './lab';
import { Stack } from './stack';
import { windowA, windowB, windowM } from './windows-admission';
import { windowI, windowJ, windowK, windowL } from './windows-infra';
import { windowC, windowD, windowE, windowFIdempotent, windowFNonIdempotent, windowG, windowH } from './windows-worker';

const WINDOWS: Array<[string, (lab: Lab) => Promise<WindowRow>]> = [
  ['A', windowA],
  ['B', windowB],
  ['C', windowC],
  ['D', windowD],
  ['E', windowE],
  ['F', windowFIdempotent],
  ["F'", windowFNonIdempotent],
  ['G', windowG],
  ['H', windowH],
  ['I', windowI],
  ['J', windowJ],
  ['K', windowK],
  ['L', windowL],
  ['M', windowM],
];

const say = (msg: string) => console.log(`[matrix ${new Date().toISOString().slice(11, 19)}] ${msg}`);

/** The lab table as Markdown. */
export function matrixTable(rows: WindowRow[]): string {
  const lines = [
    '| window | scenario | graph | tool entries [flight,hotel,car] | bookings | checkpoints before → after | final status | verdict |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const cps = `${r.checkpointsBefore ?? '-'} → ${r.checkpointsAfter ?? '-'}`;
    lines.push(`| ${r.window} | ${r.scenario} | ${r.graph} | ${r.entries} | ${r.bookings} | ${cps} | ${r.status} | ${r.verdict} |`);
  }
  const notes = rows.filter((r) => r.notes.length > 0).map((r) => `- ${r.window}: ${r.notes.join('; ')}`);
  return [...lines, '', ...notes].join('\n');
}

/** Runs every window in order; writes `<out>/matrix.json` and `matrix.md`; returns the exit code. */
export async function runMatrix(out: string, cleanup: Array<() => void>, only?: string[]): Promise<number> {
  const started = Date.now();
  const dir = scratchDir('runledger-matrix-');
  const pg = await ChaosPostgres.start(dir);
  cleanup.push(() => pg.killNow());
  const redis = await ChaosRedis.start();
  cleanup.push(() => redis.killNow());
  const stack = await Stack.create(pg, redis, {
    schema: 'matrix',
    leaseTtlMs: 2_000,
    sweepIntervalMs: 250,
    workerConcurrency: 4,
    logDir: path.join(dir, 'logs'),
  });
  cleanup.push(() => stack.killNow());
  await stack.startProducer();
  const lab = new Lab(stack);
  const rows: WindowRow[] = [];
  say(`PostgreSQL :${pg.port}, Redis :${redis.port}, producer :${stack.producerPort}; logs in ${path.join(dir, 'logs')}`);
  for (const [name, run] of WINDOWS.filter(([n]) => !only || only.includes(n))) {
    const t = Date.now();
    let r: WindowRow;
    try {
      r = await run(lab);
    } catch (err) {
      r = {
        window: name,
        scenario: '(did not finish)',
        graph: '-',
        entries: '-',
        bookings: '-',
        checkpointsBefore: null,
        checkpointsAfter: null,
        status: '-',
        verdict: 'FAIL',
        notes: [(err as Error).message.split('\n')[0] ?? ''],
      };
    }
    rows.push(r);
    say(`${name}: ${r.verdict} in ${((Date.now() - t) / 1000).toFixed(1)} s ${r.notes.length ? `(${r.notes.join('; ')})` : ''}`);
    await lab.reset();
    if (!stack.producer?.alive) await stack.startProducer();
  }
  const text = matrixTable(rows);
  console.log(`\n${text}\n`);
  mkdirSync(out, { recursive: true });
  const result = { startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, leaseTtlMs: 2_000, sweepIntervalMs: 250, rows };
  writeFileSync(path.join(out, 'matrix.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(path.join(out, 'matrix.md'), `# Crash-window matrix (ARCHITECTURE.md, Failure → behaviour)\n\n${text}\n`);
  say(`written ${path.join(out, 'matrix.json')} and matrix.md`);
  await stack.close();
  await redis.stop();
  await pg.remove();
  return rows.every((r) => r.verdict === 'PASS') ? 0 : 1;
}
