// The faults a chaos run injects, on a seeded schedule, and the watchdog that restarts what they
// (or a real bug) brought down. Worker restarts and SIGCONTs run in the background so the
// schedule keeps its pace; infrastructure faults run one at a time.
import { ChaosRedisCluster } from './cluster';
import { DeployFault } from './faults-deploy';
import { NET_FAULT_KINDS, NetFaults } from './faults-net';
import type { Rng } from './prng';
import type { Stack } from './stack';
import { describeExit, type Supervisor } from './supervisor';

export const FAULT_KINDS = [
  'worker_sigkill',
  'worker_sigstop',
  'worker_sigterm',
  'redis_flushall',
  'redis_restart',
  // maxmemory below Redis's use for a few seconds (chaos/infra.ts, outOfMemory).
  'redis_oom',
  'postgres_restart',
  'producer_crash_after_commit',
  ...NET_FAULT_KINDS,
  // A rolling deploy of a new graph version (chaos/faults-deploy.ts).
  'deploy',
  // Redis Cluster runs only (`--cluster`), in place of redis_flushall, redis_restart, redis_oom and redis_partition.
  'redis_master_kill',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ScheduledFault {
  atMs: number;
  kind: FaultKind;
}

/** `counts` faults per kind in a seeded order, spread over `windowMs` with jitter. */
export function buildSchedule(rng: Rng, counts: Record<FaultKind, number>, windowMs: number): ScheduledFault[] {
  const kinds = rng.shuffle(FAULT_KINDS.flatMap((k) => Array<FaultKind>(counts[k]).fill(k)));
  const gap = windowMs / Math.max(1, kinds.length);
  return kinds.map((kind, i) => ({ kind, atMs: Math.round(gap * i + gap * 0.3 * rng.float()) }));
}

export interface FaultRecord {
  at: string;
  kind: FaultKind;
  target?: string;
  detail?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class FaultInjector {
  readonly done = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  readonly skipped = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  readonly timeline: FaultRecord[] = [];
  /** Worker exits after SIGTERM that were not a clean drain (exit code 0). */
  readonly uncleanDrains: Array<{ target: string; detail: string }> = [];
  private infra: Promise<void> = Promise.resolve();
  private readonly stack: Stack;
  readonly net: NetFaults;
  readonly deploys: DeployFault;

  constructor(
    private readonly supervisor: Supervisor,
    private readonly rng: Rng,
    /** Sends one more submission (used when no client submits while the crash hook is armed). */
    private readonly probeSubmit: () => Promise<void>,
  ) {
    this.stack = supervisor.stack;
    this.net = new NetFaults(supervisor, rng);
    this.deploys = new DeployFault(supervisor, rng);
  }

  private record(kind: FaultKind, target?: string, detail?: string): void {
    this.done[kind]++;
    this.timeline.push({ at: new Date().toISOString(), kind, target, detail });
  }

  /** Injects one fault; returns when its foreground part is done (restarts may continue in the background). */
  async inject(kind: FaultKind): Promise<void> {
    if (kind === 'worker_sigkill' || kind === 'worker_sigstop' || kind === 'worker_sigterm') return this.workerFault(kind);
    if (kind === 'producer_crash_after_commit') return this.supervisor.ownProducer(() => this.producerCrash());
    if (kind === 'link_latency') return this.record(kind, 'every worker link', this.net.latency());
    if (kind === 'pg_partition' || kind === 'redis_partition') return this.netFault(kind);
    if (kind === 'deploy') return this.record(kind, 'every worker and the producer', await this.deploys.deploy());
    const run = this.infra.then(() => this.infraFault(kind));
    this.infra = run.catch(() => {});
    await run;
  }

  /** A worker cut off from PostgreSQL (preferably one holding leases) or from Redis. */
  private async netFault(kind: 'pg_partition' | 'redis_partition'): Promise<void> {
    const slot = await this.pickWorker();
    if (!slot || !this.stack.workers.get(slot)) {
      this.skipped[kind]++;
      return;
    }
    const target = this.stack.workerIdOf(slot) ?? slot;
    const detail = kind === 'pg_partition' ? await this.net.pgPartition(slot, target) : this.net.redisPartition(slot);
    this.record(kind, target, detail);
  }

  private async infraFault(kind: 'redis_flushall' | 'redis_restart' | 'redis_oom' | 'postgres_restart' | 'redis_master_kill'): Promise<void> {
    const { redis } = this.stack;
    if (kind === 'postgres_restart') {
      await this.stack.pg.restart(this.rng.int(0, 1_000));
      return this.record(kind);
    }
    if (kind === 'redis_master_kill') {
      if (!(redis instanceof ChaosRedisCluster)) throw new Error('redis_master_kill needs a Redis Cluster run (--cluster)');
      // The master of the queue's one hash slot: every delivery lives there.
      const port = await redis.killMaster(`{${this.stack.options.schema}}`, this.rng.int(0, 3_000));
      return this.record(kind, `master :${port}`);
    }
    if (redis instanceof ChaosRedisCluster) throw new Error(`${kind} needs a single Redis (not --cluster)`);
    if (kind === 'redis_flushall') await redis.flushAll();
    if (kind === 'redis_restart') await redis.restart(this.rng.int(0, 500));
    if (kind === 'redis_oom') return this.record(kind, `Redis ${redis.policy}`, await redis.outOfMemory(this.rng.int(2_000, 6_000)));
    this.record(kind);
  }

  /**
   * A live, unoccupied worker slot, so that another free one keeps running (waits up to 20 s for
   * two). Prefers, for up to 3 s, one that holds leases: a fault mid-run is the one that matters.
   */
  private async pickWorker(): Promise<string | undefined> {
    const preferUntil = Date.now() + 3_000;
    for (let i = 0; i < 200; i++) {
      const free = this.supervisor.freeSlots();
      if (free.length >= 2) {
        const owners = await leaseOwnerCounts(this.stack).catch(() => new Map<string, number>());
        const holding = free.filter((s) => owners.has(this.stack.workerIdOf(s) ?? ''));
        if (holding.length > 0) return this.rng.pick(holding);
        if (Date.now() > preferUntil) return this.rng.pick(free);
      }
      await sleep(100);
    }
    return undefined;
  }

  private async workerFault(kind: 'worker_sigkill' | 'worker_sigstop' | 'worker_sigterm'): Promise<void> {
    const slot = await this.pickWorker();
    const p = slot ? this.stack.workers.get(slot) : undefined;
    if (!slot || !p) {
      this.skipped[kind]++;
      return;
    }
    const target = this.stack.workerIdOf(slot) ?? slot;
    this.record(kind, target);
    if (kind === 'worker_sigstop') {
      const { leaseTtlMs, sweepIntervalMs } = this.stack.options;
      p.kill('SIGSTOP');
      // Paused past its lease: another worker takes the jobs over; on SIGCONT its writes must be refused.
      return this.supervisor.occupy(slot, async () => {
        await sleep(leaseTtlMs + sweepIntervalMs + this.rng.int(300, 1_500));
        p.kill('SIGCONT');
        await sleep(300);
      });
    }
    const signal = kind === 'worker_sigkill' ? 'SIGKILL' : 'SIGTERM';
    const downMs = this.rng.int(200, 1_500);
    this.supervisor.occupy(slot, async () => {
      const wasAlive = p.alive;
      const code = await this.stack.stopWorker(slot, signal);
      if (signal === 'SIGTERM' && wasAlive && code !== 0) this.uncleanDrains.push({ target, detail: describeExit(p).detail });
      await sleep(downMs);
      await this.supervisor.startWorker(slot);
    });
  }

  /** Window B: the producer dies between the admission's commit and its queue add; the client retries the key. */
  private async producerCrash(): Promise<void> {
    await this.stack.stopProducer('SIGTERM');
    await this.supervisor.startProducer({ RUNLEDGER_TEST_CRASH_AT: 'after_admit_commit' });
    const armed = this.stack.producer;
    if (!armed) return;
    const died = () => Promise.race([armed.exited.then(() => true), sleep(4_000).then(() => false)]);
    if (!(await died())) {
      void this.probeSubmit();
      await died();
    }
    if (armed.child.signalCode === 'SIGKILL') this.record('producer_crash_after_commit', 'producer');
    else this.skipped.producer_crash_after_commit++;
    await this.stack.stopProducer('SIGKILL');
    await this.supervisor.startProducer({});
  }

  /**
   * The closing fault, after everything healed: SIGKILLs the worker holding the most leases and
   * keeps it down until `watch(workerId, killedAt)` (the lease watch of invariant 7) returns, then restarts it.
   */
  async closingKill<T>(watch: (workerId: string, killedAt: number) => Promise<T>, timeoutMs = 20_000): Promise<T | undefined> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const owners = await leaseOwnerCounts(this.stack).catch(() => new Map<string, number>());
      const held = (slot: string) => owners.get(this.stack.workerIdOf(slot) ?? '') ?? 0;
      const [slot] = this.supervisor
        .freeSlots()
        .filter(held)
        .sort((x, y) => held(y) - held(x));
      if (slot) {
        const workerId = this.stack.workerIdOf(slot) ?? slot;
        this.record('worker_sigkill', workerId, `closing fault: ${held(slot)} lease(s) held`);
        this.supervisor.busy.add(slot);
        const killedAt = Date.now();
        await this.stack.stopWorker(slot, 'SIGKILL');
        try {
          return await watch(workerId, killedAt);
        } finally {
          await this.supervisor.startWorker(slot);
          this.supervisor.busy.delete(slot);
        }
      }
      if (Date.now() > end) return undefined;
      await sleep(50);
    }
  }

  /** Waits for the infrastructure fault in flight, then lets the supervisor bring everything back. */
  async heal(): Promise<void> {
    await this.infra;
    await this.net.heal();
    await this.supervisor.heal();
  }
}

/** Leases held per worker id, from the ledger. */
async function leaseOwnerCounts(stack: Stack): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const pages = await Promise.all([stack.ledger.list({ status: 'starting', limit: 500 }), stack.ledger.list({ status: 'running', limit: 500 })]);
  for (const page of pages) for (const j of page.jobs) if (j.leaseOwner) counts.set(j.leaseOwner, (counts.get(j.leaseOwner) ?? 0) + 1);
  return counts;
}
