// A local Redis Cluster for the chaos harness: three masters and one replica each, plain
// `redis-server --cluster-enabled yes` processes joined by `redis-cli --cluster create`, no
// persistence. A master can be killed and brought back on its port: its replica takes over.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, isPortOpen } from '../packages/ledger/src/index';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long a master may be silent before its replica is promoted. */
export const NODE_TIMEOUT_MS = 2_000;

/** 7151–7156 when all are free (the harness's ports), else undefined: any free ones. */
export async function clusterPorts(): Promise<number[] | undefined> {
  const ports = [7151, 7152, 7153, 7154, 7155, 7156];
  const taken = await Promise.all(ports.map((p) => isPortOpen(p)));
  return taken.some(Boolean) ? undefined : ports;
}

export class ChaosRedisCluster {
  private readonly children = new Map<number, ChildProcess>();

  private constructor(
    private readonly dir: string,
    readonly ports: number[],
  ) {}

  /** Starts six nodes on `ports` (free ones when not given) and creates the cluster. */
  static async start(root: string, ports?: number[]): Promise<ChaosRedisCluster> {
    const chosen = ports ?? (await Promise.all(Array.from({ length: 6 }, () => freePort())));
    const c = new ChaosRedisCluster(path.join(root, 'redis-cluster'), chosen);
    mkdirSync(c.dir, { recursive: true });
    try {
      for (const p of chosen) await c.up(p);
      const nodes = chosen.map((p) => `127.0.0.1:${p}`);
      await run('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '1', '--cluster-yes']);
      // Three minutes: at load averages of 40–50 on 2 cores, one minute was not enough.
      await c.waitHealthy(180_000);
    } catch (err) {
      // The caller never got the nodes, so nothing else would stop them.
      await c.stop();
      throw err;
    }
    return c;
  }

  /** Any one node: the client discovers the rest. */
  get url(): string {
    return `redis-cluster://127.0.0.1:${this.ports[0]}`;
  }

  private async up(port: number): Promise<void> {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      `nodes-${port}.conf`,
      '--cluster-node-timeout',
      String(NODE_TIMEOUT_MS),
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
      // Each node its own file in the shared directory (a replica's full sync writes one).
      '--dbfilename',
      `dump-${port}.rdb`,
      // A replica may take over however long its link to the master was down: the ledger, not
      // Redis, holds what must survive. With the default (10), a replica that had rejoined after
      // an earlier kill was once not promoted within 60 s, leaving the slot without a master.
      '--cluster-replica-validity-factor',
      '0',
    ];
    const child = spawn('redis-server', args, { cwd: this.dir, stdio: 'ignore' });
    this.children.set(port, child);
    for (let i = 0; i < 200; i++) {
      if (await isPortOpen(port)) return;
      if (child.exitCode !== null) throw new Error(`redis-server :${port} exited with ${child.exitCode} on start`);
      await sleep(50);
    }
    throw new Error(`redis-server did not open port ${port}`);
  }

  private async cli(port: number, ...args: string[]): Promise<string> {
    return (await run('redis-cli', ['-p', String(port), ...args], { timeout: 15_000 })).stdout.trim();
  }

  /** The port of the master that serves `key`'s hash slot now, as a live node sees it. */
  async masterOf(key: string): Promise<number> {
    const live = this.ports.find((p) => this.children.get(p)?.exitCode === null && this.children.get(p)?.signalCode === null);
    if (live === undefined) throw new Error('no Redis Cluster node is running');
    const slot = Number(await this.cli(live, 'CLUSTER', 'KEYSLOT', key));
    // <id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> <slot ranges…>
    for (const line of (await this.cli(live, 'CLUSTER', 'NODES')).split('\n')) {
      const [, addr, flags, , , , , , ...ranges] = line.split(' ');
      if (!flags?.includes('master') || flags.includes('fail')) continue;
      const serves = ranges.some((r) => {
        const [from, to = from] = r.split('-').map(Number);
        return from !== undefined && to !== undefined && slot >= from && slot <= to;
      });
      if (serves) return Number(addr?.split('@')[0]?.split(':')[1]);
    }
    throw new Error(`no live master serves slot ${slot}`);
  }

  /**
   * SIGKILLs the master serving `key`, waits until its replica is promoted (node timeout plus the
   * election), keeps it down `downMs` more, then starts it again on its port: it rejoins as a
   * replica of the new master. Without persistence, writes not yet replicated when it died are
   * gone. (Restarted before the failover, an empty master would keep its slots and wipe its replica.)
   */
  async killMaster(key: string, downMs: number): Promise<number> {
    const port = await this.masterOf(key);
    const child = this.children.get(port);
    const gone = new Promise((r) => child?.once('exit', r));
    child?.kill('SIGKILL');
    await gone;
    for (const end = Date.now() + 60_000; (await this.masterOf(key).catch(() => port)) === port; ) {
      if (Date.now() > end) throw new Error(`no replica of :${port} was promoted within 60 s`);
      await sleep(250);
    }
    await sleep(downMs);
    await this.up(port);
    await this.waitHealthy(180_000);
    return port;
  }

  /**
   * Waits until every node reports `cluster_state:ok`, three masters each have a live replica, and
   * every replica's replication link is up (its first sync done), so it can take over.
   */
  async waitHealthy(timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const ok = await Promise.all(this.ports.map((p) => this.cli(p, 'CLUSTER', 'INFO').catch(() => '')));
      const nodes = await this.cli(this.ports[0] ?? 0, 'CLUSTER', 'NODES').catch(() => '');
      const lines = nodes.split('\n').filter((l) => l.trim());
      const live = (role: string) => lines.filter((l) => l.includes(role) && !l.includes('fail') && l.includes('connected')).length;
      const replication = await Promise.all(this.ports.map((p) => this.cli(p, 'INFO', 'replication').catch(() => '')));
      const linksUp = replication.every((r) => !r.includes('role:slave') || r.includes('master_link_status:up'));
      if (ok.every((i) => i.includes('cluster_state:ok')) && live('master') === 3 && live('slave') === 3 && linksUp) return;
      if (Date.now() > end) throw new Error(`Redis Cluster not healthy after ${timeoutMs} ms:\n${nodes}`);
      await sleep(250);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(
      [...this.children.values()]
        .filter((c) => c.exitCode === null && c.signalCode === null)
        .map((c) => {
          const gone = new Promise((r) => c.once('exit', r));
          c.kill('SIGKILL');
          return gone;
        }),
    );
  }

  killNow(): void {
    for (const c of this.children.values()) c.kill('SIGKILL');
  }
}
