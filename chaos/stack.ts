// One Runledger deployment on the chaos servers: a schema and queue prefix of its own, a
// producer and N workers as real processes, and the harness's own ledger pool and HTTP client.
import path from 'node:path';
import type pg from 'pg';
import { RunledgerClient } from '../packages/client/src/index';
import { createPool, freePort, isPortOpen, Ledger, migrate } from '../packages/ledger/src/index';
import { ChaosRedisCluster } from './cluster';
import type { ChaosPostgres, ChaosRedis } from './infra';
import type { HostsApart } from './netns';
import type { PgBouncer } from './pgbouncer';
import { Proc, sumRejections } from './procs';
import { type LinkCondition, LinkProxy } from './proxy';

/**
 * A worker slot's links, each through a proxy the faults can slow down or cut. A Redis Cluster
 * client connects to the nodes the cluster names, so on a cluster only PostgreSQL goes through one.
 */
export interface WorkerLinks {
  pg: LinkProxy;
  redis: LinkProxy | undefined;
}

export interface StackOptions {
  schema: string;
  leaseTtlMs: number;
  sweepIntervalMs: number;
  workerConcurrency: number;
  logDir: string;
  /** The producer and each worker slot on a host of its own, every link to PostgreSQL and Redis through a proxy with `condition`. */
  hostsApart?: { hosts: HostsApart; condition: LinkCondition };
  /** Producer and workers go through it (RUNLEDGER_PG_POOLER=transaction); migrations, the harness and its audit go direct. */
  pgbouncer?: PgBouncer;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Stack {
  readonly ledger: Ledger;
  readonly pool: pg.Pool;
  readonly client: RunledgerClient;
  producer: Proc | undefined;
  /** Live worker per slot (undefined while a slot is down). */
  readonly workers = new Map<string, Proc>();
  /** Every process ever started, for the rejection counts of the dead ones too. */
  readonly all: Proc[] = [];
  /** Per worker slot, kept across its restarts. */
  readonly links = new Map<string, WorkerLinks>();
  /** The producer's links when hosts are apart (no fault touches them). */
  private producerLinks: WorkerLinks | undefined;
  private spawned = 0;
  /**
   * The version admission records (the producer's RUNLEDGER_BUILD_ID); the deploy fault moves it.
   * Versions go v1, v2, …: each declares it can resume every earlier one (chaos/graphs.ts).
   */
  buildId = 'v1';
  /** The version each worker slot runs, kept across its restarts (default the current one). */
  readonly slotBuild = new Map<string, string>();

  private constructor(
    readonly pg: ChaosPostgres,
    readonly redis: ChaosRedis | ChaosRedisCluster,
    readonly options: StackOptions,
    readonly producerPort: number,
  ) {
    this.pool = createPool({ connectionString: pg.url, schema: options.schema, max: 8, onError: () => {} });
    this.ledger = new Ledger(this.pool, { leaseTtlMs: options.leaseTtlMs });
    this.client = new RunledgerClient({ baseUrl: `http://${this.producerHost}:${producerPort}`, retries: 2, retryDelayMs: 200, requestTimeoutMs: 5_000 });
  }

  /** Where the producer listens: loopback, or its own host's address when hosts are apart. */
  get producerHost(): string {
    return this.options.hostsApart?.hosts.host('producer').ip ?? '127.0.0.1';
  }

  /** PostgreSQL's and Redis's URLs as a process reaches them through `links`. */
  private through(links: WorkerLinks, host: string): { DATABASE_URL: string; REDIS_URL: string } {
    return {
      DATABASE_URL: this.dbUrl.replace(`127.0.0.1:${this.dbPort}/`, `${host}:${links.pg.port}/`),
      REDIS_URL: links.redis ? this.redis.url.replace(/127\.0\.0\.1:\d+$/, `${host}:${links.redis.port}`) : this.redis.url,
    };
  }

  /** Migrates the schema; no process runs yet. */
  static async create(pg: ChaosPostgres, redis: ChaosRedis | ChaosRedisCluster, options: StackOptions): Promise<Stack> {
    await migrate({ connectionString: pg.url, schema: options.schema });
    return new Stack(pg, redis, options, await freePort());
  }

  /** Where producer and workers reach PostgreSQL: the PgBouncer when there is one. */
  private get dbUrl(): string {
    return this.options.pgbouncer?.url ?? this.pg.url;
  }

  private get dbPort(): number {
    return this.options.pgbouncer?.options.port ?? this.pg.port;
  }

  get env(): NodeJS.ProcessEnv {
    const pooled = this.options.pgbouncer ? { RUNLEDGER_PG_POOLER: 'transaction', RUNLEDGER_PG_DIRECT_URL: this.pg.url } : {};
    return {
      ...process.env,
      ...pooled,
      DATABASE_URL: this.dbUrl,
      DB_SCHEMA: this.options.schema,
      REDIS_URL: this.redis.url,
      QUEUE_BACKEND: 'redis',
      // Hash-tagged on a cluster: every key of the queue in one slot (infra/README.md).
      QUEUE_PREFIX: this.redis instanceof ChaosRedisCluster ? `{${this.options.schema}}` : this.options.schema,
      LEASE_TTL_MS: String(this.options.leaseTtlMs),
      SWEEP_INTERVAL_MS: String(this.options.sweepIntervalMs),
      WORKER_CONCURRENCY: String(this.options.workerConcurrency),
      LOG_LEVEL: 'info',
      RUNLEDGER_TEST_CRASH_AT: '',
      // Several workers on one machine: no Prometheus port each.
      METRICS_PORT: '0',
    };
  }

  /** Spawns `entry` as `name` on the host of `host` (a worker slot or `producer`) when hosts are apart. */
  private spawn(name: string, entry: string, extra: Record<string, string>, host: string): Proc {
    const p = new Proc(
      `${String(++this.spawned).padStart(3, '0')}-${name}`,
      entry,
      { ...this.env, ...extra },
      path.join(this.options.logDir, this.options.schema),
      this.options.hostsApart?.hosts.prefix(host) ?? [],
    );
    this.all.push(p);
    return p;
  }

  /** Starts the producer and waits until it listens. `extra` env, e.g. the crash hook. */
  async startProducer(extra: Record<string, string> = {}): Promise<Proc> {
    const apart = this.options.hostsApart;
    if (apart && !this.producerLinks) this.producerLinks = await this.proxies(apart.hosts.host('producer').gatewayIp);
    const through = apart && this.producerLinks ? this.through(this.producerLinks, apart.hosts.host('producer').gatewayIp) : {};
    const p = this.spawn(
      'producer',
      'apps/producer/src/main.ts',
      { PORT: String(this.producerPort), HOST: this.producerHost, LOG_LEVEL: 'warn', RUNLEDGER_BUILD_ID: this.buildId, ...through, ...extra },
      'producer',
    );
    this.producer = p;
    // Ten minutes: on a loaded machine loading the producer's modules alone takes tens of seconds,
    // and with load averages of 40 on 2 cores a start took over five minutes.
    for (const end = Date.now() + 600_000; !(await isPortOpen(this.producerPort, this.producerHost, 200)); ) {
      if (!p.alive || Date.now() > end) throw new Error(`producer did not start:\n${p.recent}`);
      await sleep(50);
    }
    return p;
  }

  /** Stops the producer (SIGTERM drains; SIGKILL does not) and waits for its exit. */
  async stopProducer(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const p = this.producer;
    this.producer = undefined;
    if (!p) return;
    p.kill(signal);
    await p.exited;
  }

  /** Starts the worker of `slot` (its id is `<slot>-<n>`) and waits for "worker started". */
  async startWorker(slot: string, extra: Record<string, string> = {}): Promise<Proc> {
    const n = this.all.filter((p) => p.name.endsWith(`-${slot}`)).length + 1;
    const links = await this.linksOf(slot);
    const through = this.through(links, this.options.hostsApart?.hosts.host(slot).gatewayIp ?? '127.0.0.1');
    const p = this.spawn(slot, 'apps/worker/src/main.ts', { RUNLEDGER_WORKER_ID: `${slot}-${n}`, ...through, ...this.versionEnv(slot), ...extra }, slot);
    this.workers.set(slot, p);
    await p.waitForLine('worker started', 600_000);
    return p;
  }

  /** A worker slot's version (RUNLEDGER_BUILD_ID) and the earlier ones it may resume (CHAOS_RESUMES, chaos/graphs.ts). */
  private versionEnv(slot: string): Record<string, string> {
    const build = this.slotBuild.get(slot) ?? this.buildId;
    this.slotBuild.set(slot, build);
    const n = Number(build.slice(1));
    return {
      RUNLEDGER_BUILD_ID: build,
      RUNLEDGER_GRAPHS: path.join(import.meta.dirname, 'graphs.ts'),
      CHAOS_RESUMES: Array.from({ length: n - 1 }, (_, i) => `v${i + 1}`).join(','),
    };
  }

  /** The proxies between `slot`'s worker and PostgreSQL and Redis (started on first use). */
  async linksOf(slot: string): Promise<WorkerLinks> {
    let links = this.links.get(slot);
    if (!links) {
      links = await this.proxies(this.options.hostsApart?.hosts.host(slot).gatewayIp ?? '127.0.0.1');
      this.links.set(slot, links);
    }
    return links;
  }

  /** A pair of proxies to PostgreSQL and Redis listening on `host`, with the hosts-apart condition when set. */
  private async proxies(host: string): Promise<WorkerLinks> {
    const { redis } = this;
    const links = {
      pg: await LinkProxy.start(this.dbPort, host),
      redis: redis instanceof ChaosRedisCluster ? undefined : await LinkProxy.start(redis.port, host),
    };
    const condition = this.options.hostsApart?.condition;
    if (condition) for (const l of [links.pg, links.redis]) if (l) l.condition = condition;
    return links;
  }

  /** Sends `signal` to the worker of `slot`, waits for its exit and forgets it. */
  async stopWorker(slot: string, signal: NodeJS.Signals): Promise<number | null> {
    const p = this.workers.get(slot);
    if (!p) return null;
    this.workers.delete(slot);
    p.kill(signal);
    return p.exited;
  }

  /** The worker id the lease owner column holds for a live slot. */
  workerIdOf(slot: string): string | undefined {
    const p = this.workers.get(slot);
    return p ? `${slot}-${this.all.filter((q) => q.name.endsWith(`-${slot}`)).indexOf(p) + 1}` : undefined;
  }

  rejections() {
    return sumRejections(this.all);
  }

  /** Kills every process at once and closes the pool. */
  async close(): Promise<void> {
    for (const p of this.all) p.kill('SIGKILL');
    await Promise.all(this.all.map((p) => p.exited));
    const links = [...this.links.values(), ...(this.producerLinks ? [this.producerLinks] : [])];
    await Promise.all(links.flatMap((l) => [l.pg.close(), l.redis?.close()]));
    await this.pool.end().catch(() => {});
  }

  /** Synchronous kill for exit handlers. */
  killNow(): void {
    for (const p of this.all) p.kill('SIGKILL');
  }
}
