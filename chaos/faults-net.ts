// Network faults on the proxies between each worker and PostgreSQL and Redis (chaos/proxy.ts):
// a worker cut off from PostgreSQL past its lease, a worker cut off from Redis, and 200 ms of
// added latency on every link.

import type { Rng } from './prng';
import type { LeaseLostLine } from './procs';
import type { Stack } from './stack';
import type { Supervisor } from './supervisor';

export const NET_FAULT_KINDS = ['pg_partition', 'redis_partition', 'link_latency'] as const;
export type NetFaultKind = (typeof NET_FAULT_KINDS)[number];

/** What one PostgreSQL partition showed, from the ledger and the worker's log. */
export interface PartitionCheck {
  target: string;
  at: string;
  /** Leases the worker held when the partition began (job id and fencing token). */
  held: number;
  /**
   * Of those, runs the worker stopped itself ("lease lost" in its log) before the partition healed,
   * including one it stopped between the harness's read of its lease and the cut.
   */
  stoppedBeforeHeal: number;
  /** Runs that stopped once the heal failed the PostgreSQL call they were blocked in (nothing written). */
  stoppedOnHeal: number;
  /**
   * Leases whose claim committed but whose answer the cut kept from the worker: it never began a
   * run (no "decision" line for the token), so there was nothing to stop.
   */
  claimAnswerLost: number;
  /** Of those, jobs it ended before the partition (their end landed first). */
  endedBefore: number;
  /**
   * Ledger rows written under a held token by the partitioned worker from the cut on, and stamped
   * after its lease had expired or at the heal or later (events and effects): stale writes.
   */
  rowsWritten: number;
  /**
   * Rows stamped after the cut but inside the lease and before the heal: the proxy forwards
   * nothing it receives after the cut, so each was sent before it (a statement in flight). Not a
   * stale write: the lease was still valid when it committed.
   */
  inFlightAtCut: number;
  /** Checkpoint writes of those runs the fence refused (each a checkpoint the worker tried to write). */
  checkpointWritesTried: number;
  /** Each such row, and each held run it did not stop. */
  problems: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A harness read of the ledger, tried again for up to 60 s: on a loaded machine (or right after a
 * PostgreSQL restart) one connection attempt can time out, and that must not end the run.
 */
export async function readRetrying<T>(read: () => Promise<T>, forMs = 60_000): Promise<T> {
  for (const end = Date.now() + forMs; ; ) {
    try {
      return await read();
    } catch (err) {
      if (Date.now() > end) throw err;
      await sleep(500);
    }
  }
}
/** Rows the sweep and the producers write under an old token on the holder's behalf. */
const NOT_THE_WORKERS = new Set(['enqueued', 'recovery_required']);

export class NetFaults {
  readonly partitions: PartitionCheck[] = [];
  private readonly background = new Set<Promise<void>>();

  constructor(
    private readonly supervisor: Supervisor,
    private readonly rng: Rng,
  ) {}

  private get stack(): Stack {
    return this.supervisor.stack;
  }

  /**
   * Cuts `slot`'s worker off from PostgreSQL (both directions) for lease TTL + sweep interval +
   * 0.5–2 s while its graphs keep running, then heals and checks the ledger: from the cut on, no
   * event or effect row under a token it held, and every run it held stopped before the heal.
   */
  async pgPartition(slot: string, target: string): Promise<string> {
    const links = await this.stack.linksOf(slot);
    const proc = this.stack.workers.get(slot);
    const held = await heldLeases(this.stack, target);
    const since = Date.now();
    links.pg.partition('both');
    const { leaseTtlMs, sweepIntervalMs } = this.stack.options;
    this.occupy(slot, async () => {
      await sleep(leaseTtlMs + sweepIntervalMs + this.rng.int(500, 2_000));
      const healedAt = Date.now();
      links.pg.heal();
      // Whatever the worker still had queued would land now: give it a moment to try.
      await sleep(1_500);
      this.partitions.push(await this.check(target, held, since, healedAt, proc?.leaseLost ?? [], proc?.runsBegun ?? new Set()));
    });
    return `${held.length} lease(s) held`;
  }

  private async check(
    target: string,
    held: Array<{ jobId: string; token: number; expiresAt: number }>,
    since: number,
    healedAt: number,
    leaseLost: LeaseLostLine[],
    runsBegun: ReadonlySet<string>,
  ): Promise<PartitionCheck> {
    const { ledger } = this.stack;
    const c: PartitionCheck = {
      target,
      at: new Date(since).toISOString(),
      held: held.length,
      stoppedBeforeHeal: 0,
      stoppedOnHeal: 0,
      claimAnswerLost: 0,
      endedBefore: 0,
      rowsWritten: 0,
      inFlightAtCut: 0,
      checkpointWritesTried: 0,
      problems: [],
    };
    for (const { jobId, token, expiresAt } of held) {
      const [events, effects] = await readRetrying(() => Promise.all([ledger.events(jobId), ledger.effects(jobId)]));
      const mine = events.filter((e) => e.fencingToken === token && e.workerId === target && !NOT_THE_WORKERS.has(e.type));
      const inFlight = (at: Date) => at.getTime() < expiresAt && at.getTime() < healedAt;
      const after = mine.filter((e) => e.at.getTime() >= since);
      const effectsAfter = effects.filter((f) => f.fencingToken === token && f.updatedAt.getTime() >= since);
      c.inFlightAtCut += after.filter((e) => inFlight(e.at)).length + effectsAfter.filter((f) => inFlight(f.updatedAt)).length;
      const stale = after.filter((e) => !inFlight(e.at));
      const staleEffects = effectsAfter.filter((f) => !inFlight(f.updatedAt));
      c.rowsWritten += stale.length + staleEffects.length;
      for (const e of stale) c.problems.push(`${jobId}: event ${e.type} under token ${token} at ${e.at.toISOString()}`);
      for (const f of staleEffects) c.problems.push(`${jobId}: effect ${f.name} ${f.status} under token ${token} at ${f.updatedAt.toISOString()}`);
      // This run's stop lines (a stop read just before the cut counts: the harness read the lease
      // from the ledger first, and the worker may have judged it lost meanwhile).
      const stops = leaseLost.filter((l) => l.jobId === jobId && (l.token === undefined || l.token === token));
      c.checkpointWritesTried += stops.filter((l) => l.at >= since).reduce((n, l) => n + l.rejectedCheckpointWrites, 0);
      if (mine.some((e) => ['completed', 'failed', 'interrupted'].includes(e.type) && e.at.getTime() < since)) c.endedBefore++;
      else if (stops.some((l) => l.at <= healedAt)) c.stoppedBeforeHeal++;
      else if (stops.length > 0) c.stoppedOnHeal++;
      else if (!runsBegun.has(`${jobId}:${token}`)) c.claimAnswerLost++;
      else c.problems.push(`${jobId}: the run under token ${token} did not stop`);
    }
    if (c.checkpointWritesTried > 0) c.problems.push(`${c.checkpointWritesTried} checkpoint write(s) tried after the cut (refused by the fence)`);
    return c;
  }

  /** Cuts `slot`'s worker off from Redis only (both ways, or one direction) for 2–6 s. */
  redisPartition(slot: string): string {
    const cut = this.rng.pick(['both', 'up', 'down'] as const);
    this.occupy(slot, async () => {
      const { redis } = await this.stack.linksOf(slot);
      if (!redis) throw new Error('redis_partition needs a single Redis (not --cluster)');
      redis.partition(cut);
      await sleep(this.rng.int(2_000, 6_000));
      redis.heal();
    });
    return `cut ${cut}`;
  }

  /** 200 ms more on every byte of every worker link, both ways, for 5–15 s. */
  latency(): string {
    const ms = this.rng.int(5_000, 15_000);
    const run = (async () => {
      const links = [...this.stack.links.values()].flatMap((l) => (l.redis ? [l.pg, l.redis] : [l.pg]));
      for (const l of links) l.latencyMs = 200;
      await sleep(ms);
      for (const l of links) l.latencyMs = 0;
    })();
    this.track(run);
    return `200 ms for ${ms} ms on every worker link`;
  }

  private occupy(slot: string, work: () => Promise<void>): void {
    let done: () => void = () => {};
    this.track(new Promise<void>((r) => (done = r)));
    this.supervisor.occupy(slot, () => work().finally(done));
  }

  private track(run: Promise<void>): void {
    const p = run.catch(() => {}).finally(() => this.background.delete(p));
    this.background.add(p);
  }

  /** Waits for every cut and slow-down to end (each heals itself). */
  async heal(): Promise<void> {
    while (this.background.size > 0) await Promise.all([...this.background]);
  }
}

/** The leases `workerId` holds, from the ledger. */
async function heldLeases(stack: Stack, workerId: string): Promise<Array<{ jobId: string; token: number; expiresAt: number }>> {
  const pages = await readRetrying(() =>
    Promise.all([stack.ledger.list({ status: 'starting', limit: 500 }), stack.ledger.list({ status: 'running', limit: 500 })]),
  );
  return pages.flatMap((p) =>
    p.jobs.filter((j) => j.leaseOwner === workerId).map((j) => ({ jobId: j.jobId, token: j.fencingToken, expiresAt: j.leaseExpiresAt?.getTime() ?? 0 })),
  );
}
