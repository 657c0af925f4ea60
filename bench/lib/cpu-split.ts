// CPU time per job of every process an end-to-end run touches, PostgreSQL's backends included,
// attributed to the process they serve: each spawned process gets its own PGAPPNAME, and
// pg_stat_activity maps a backend's pid to that name. Background processes (WAL writer,
// checkpointer, autovacuum …) are shared by every database on the server and reported apart;
// backends that ended inside the window are counted through the postmaster's reaped-children
// time. All from /proc (this machine only): CPU time, not wall-clock, so a busy neighbour slows
// a run but does not change its figures much.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { machineBusyMs } from './cpu';

const CLOCK_TICKS_PER_SECOND = 100;

function stat(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  } catch {
    return [];
  }
}

const ticks = (f: string[], ...i: number[]) => (i.reduce((a, k) => a + Number(f[k] ?? 0), 0) * 1000) / CLOCK_TICKS_PER_SECOND;

/** User + system CPU ms of a live process (0 when gone). */
export const processMs = (pid: number) => ticks(stat(pid), 11, 12);

interface Snapshot {
  /** CPU ms of the named processes and Redis. */
  groups: Map<string, number>;
  /** CPU ms per PostgreSQL pid, with the group it counts in. */
  backends: Map<number, { group: string; ms: number }>;
  /** Postmaster's own time plus its reaped children's. */
  postmasterMs: number;
  machineMs: number;
}

export class CpuSplit {
  private constructor(
    private readonly client: pg.Client,
    private readonly postmaster: number,
    private readonly processes: Record<string, number>,
    private readonly apps: ReadonlySet<string>,
    private readonly redis: number | undefined,
  ) {}

  /** `processes`: label → pid; `apps`: the PGAPPNAMEs whose backends to attribute (others' backends are left out). */
  static async open(databaseUrl: string, processes: Record<string, number>, apps: string[], redisPid?: number): Promise<CpuSplit> {
    const client = new pg.Client({ connectionString: databaseUrl, application_name: 'cpu-split' });
    await client.connect();
    const backend = Number((await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    return new CpuSplit(client, Number(stat(backend)[1]), processes, new Set(apps), redisPid);
  }

  private async snapshot(): Promise<Snapshot> {
    const rows = (await this.client.query("SELECT pid, backend_type, coalesce(application_name, '') AS app FROM pg_stat_activity")).rows as Array<{
      pid: number;
      backend_type: string;
      app: string;
    }>;
    const groups = new Map<string, number>();
    const add = (g: string, ms: number) => groups.set(g, (groups.get(g) ?? 0) + ms);
    const backends = new Map<number, { group: string; ms: number }>();
    for (const r of rows) {
      const group = r.backend_type !== 'client backend' ? 'PostgreSQL background (shared)' : this.apps.has(r.app) ? `PostgreSQL for ${r.app}` : undefined;
      if (!group) continue;
      const ms = processMs(r.pid);
      backends.set(r.pid, { group, ms });
    }
    for (const [label, pid] of Object.entries(this.processes)) add(label, processMs(pid));
    if (this.redis) add('Redis server', processMs(this.redis));
    const pm = stat(this.postmaster);
    return { groups, backends, postmasterMs: ticks(pm, 11, 12, 13, 14), machineMs: machineBusyMs() };
  }

  /** CPU ms per group while `work` ran, plus the backends that ended meanwhile and the whole machine. */
  async during<T>(work: () => Promise<T>): Promise<{ result: T; ms: Record<string, number>; machineMs: number }> {
    const before = await this.snapshot();
    const result = await work();
    const after = await this.snapshot();
    const ms: Record<string, number> = {};
    const add = (g: string, v: number) => {
      ms[g] = (ms[g] ?? 0) + v;
    };
    for (const [label] of [...Object.entries(this.processes), ['Redis server']]) {
      if (after.groups.has(label!)) add(label!, (after.groups.get(label!) ?? 0) - (before.groups.get(label!) ?? 0));
    }
    // Per backend: one that started inside the window counts from 0.
    for (const [pid, b] of after.backends) add(b.group, b.ms - (before.backends.get(pid)?.ms ?? 0));
    // One that ended is in the postmaster's reaped-children time, with its life before the window.
    let endedMs = after.postmasterMs - before.postmasterMs;
    for (const [pid, b] of before.backends) if (!after.backends.has(pid)) endedMs -= b.ms;
    add('PostgreSQL backends ended meanwhile (any user)', Math.max(0, endedMs));
    return { result, ms, machineMs: after.machineMs - before.machineMs };
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
