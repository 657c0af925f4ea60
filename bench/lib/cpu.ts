// CPU time of the processes taking part in a measurement, read from /proc (this machine only):
// the PostgreSQL server (postmaster and every child: backends, WAL writer, checkpointer …), the
// Redis server, and any other pids. For "where does a job's time go" next to a throughput.
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import pg from 'pg';

const CLOCK_TICKS_PER_SECOND = 100;

/** User + system CPU milliseconds of one process, 0 when it is gone. */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

function parentOf(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
}

/** The pid and its children (one level: the postmaster's children are all of the server). */
function withChildren(pid: number): number[] {
  const kids = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((p) => {
      try {
        return parentOf(p) === pid;
      } catch {
        return false;
      }
    });
  return [pid, ...kids];
}

/** The pids of the PostgreSQL server behind `databaseUrl` (found through a backend's parent). */
export async function postgresPids(databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const backend = Number((await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    return withChildren(parentOf(backend));
  } finally {
    await client.end();
  }
}

/** The Redis server's pid (INFO server), when it runs on this machine. */
export async function redisPid(redisUrl: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    return Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
  } finally {
    redis.disconnect();
  }
}

/** Busy CPU milliseconds of the whole machine so far, all cores (user, nice, system, irq, softirq, steal from /proc/stat). */
export function machineBusyMs(): number {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return ((user + nice + system + irq + softirq + steal) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** CPU milliseconds each group of processes (and this process, as `bench`) spent while `work` ran, and the whole machine's. */
export async function cpuDuring<T>(
  groups: Record<string, number[]>,
  work: () => Promise<T>,
): Promise<{ result: T; ms: Record<string, number>; machineMs: number }> {
  const read = () => Object.fromEntries(Object.entries(groups).map(([k, pids]) => [k, pids.reduce((a, p) => a + cpuMs(p), 0)]));
  const before = read();
  const machine = machineBusyMs();
  const self = process.cpuUsage();
  const result = await work();
  const after = read();
  const mine = process.cpuUsage(self);
  const ms = Object.fromEntries(Object.keys(groups).map((k) => [k, (after[k] ?? 0) - (before[k] ?? 0)]));
  return { result, ms: { ...ms, bench: (mine.user + mine.system) / 1000 }, machineMs: machineBusyMs() - machine };
}
