// What one admission costs, next to one plain INSERT commit: client CPU, PostgreSQL backend
// CPU (read from /proc, so only when the server runs on this machine) and WAL bytes. This is
// the profile behind the admit figures: it shows where an admission's time goes. ledger.admit
// appears twice, one call at a time (`coalesceAdmissions: false`) and coalesced (the default).
import { readFileSync } from 'node:fs';
import { Ledger } from '../packages/ledger/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, summarize } from './figures';

const CONNECTIONS = 16;
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) of the given server processes, or null when /proc cannot show them. */
function serverCpuSeconds(pids: number[]): number | null {
  try {
    let ticks = 0;
    for (const pid of pids) {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return ticks / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const ops = opts.full ? 20_000 : 3_000;
  const repeats = opts.full ? 5 : 3;
  const db = await benchSchema(opts, 'admit_cost', CONNECTIONS);
  try {
    const alone = new Ledger(db.pool, { coalesceAdmissions: false });
    const variants: Record<string, (n: number) => Promise<unknown>> = {
      'one-row INSERT commit': db.insertPlainRow,
      'ledger.admit': (n) => alone.admit({ graph: 'echo', input: { steps: 2, n } }),
      'ledger.admit coalesced': (n) => db.ledger.admit({ graph: 'echo', input: { steps: 2, n } }),
    };
    const samples = new Map<string, { client: number[]; server: number[]; wal: number[] }>();
    for (let r = 0; r < repeats; r++) {
      for (const [name, op] of Object.entries(variants)) {
        // Every pooled connection at once: these are the backends the run will use.
        const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => db.pool.connect()));
        const pids = await Promise.all(clients.map(async (c) => Number((await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid)));
        for (const c of clients) c.release();
        const lsn = async () => String((await db.pool.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn);
        const [wal0, cpu0, server0] = [await lsn(), process.cpuUsage(), serverCpuSeconds(pids)];
        let n = 0;
        await Promise.all(
          Array.from({ length: CONNECTIONS }, async () => {
            while (n < ops) await op(n++);
          }),
        );
        const cpu = process.cpuUsage(cpu0);
        const server1 = serverCpuSeconds(pids);
        const walBytes = Number((await db.pool.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS d', [wal0])).rows[0].d);
        const s = samples.get(name) ?? { client: [], server: [], wal: [] };
        s.client.push((cpu.user + cpu.system) / ops);
        if (server0 !== null && server1 !== null) s.server.push(((server1 - server0) * 1e6) / ops);
        s.wal.push(walBytes / ops);
        samples.set(name, s);
      }
    }
    const figures: Figure[] = [];
    for (const [name, s] of samples) {
      figures.push(summarize(`${name}: client CPU`, 'µs/op', s.client));
      if (s.server.length) figures.push(summarize(`${name}: server CPU`, 'µs/op', s.server, `${CONNECTIONS} backends`));
      figures.push(summarize(`${name}: WAL`, 'bytes/op', s.wal, 'whole cluster: other activity adds to it'));
    }
    return figures;
  } finally {
    await db.drop();
  }
}
