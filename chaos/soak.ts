// A chaos run: its own PostgreSQL and Redis, a producer and N workers, a seeded job mix
// submitted over HTTP while seeded faults hit every part, then the audit of ARCHITECTURE.md, Invariants.
import path from 'node:path';
import { freePort } from '../packages/ledger/src/index';
import { auditRun } from './audit';
import { ApprovalResumer, Submissions } from './clients';
import { ChaosRedisCluster, clusterPorts } from './cluster';
import { buildSchedule, FAULT_KINDS, FaultInjector, type FaultKind } from './faults';
import { ChaosPostgres, ChaosRedis, type RedisPolicy, scratchDir } from './infra';
import { canMakeNamespaces, HostsApart } from './netns';
import { PgBouncer } from './pgbouncer';
import { Rng } from './prng';
import { ProgressSampler } from './progress';
import type { LinkCondition } from './proxy';
import { type RunResult, type RunTimings, violationsOf } from './report';
import { waitSettled, watchLeases } from './settle';
import { Stack } from './stack';
import { Supervisor } from './supervisor';
import { buildWorkload, probeSpec } from './workload';

export interface SoakConfig {
  mode: 'short' | 'default' | 'long';
  /** Redis Cluster (three masters, a replica each) instead of one redis-server; master kills replace the Redis faults. */
  cluster?: boolean;
  /** The single Redis's `maxmemory-policy` (`--redis-policy`; default noeviction, as a deployment should run it). */
  redisPolicy?: RedisPolicy;
  /** Producer and workers reach PostgreSQL through a PgBouncer in transaction mode (`--pgbouncer`, RUNLEDGER_PG_POOLER=transaction). */
  pgbouncer?: boolean;
  jobs: number;
  faults: Record<FaultKind, number>;
  /** Time over which jobs are submitted and faults injected. */
  windowMs: number;
  workers: number;
  workerConcurrency: number;
  leaseTtlMs: number;
  sweepIntervalMs: number;
  /** Longest wait for every job to settle after the faults. */
  settleTimeoutMs: number;
  /** The producer and each worker on a network namespace of its own, links with HOSTS_APART_LINK (`--hosts-apart`). */
  hostsApart?: boolean;
}

/** The link between hosts apart, each way: 20 ms ± 5 ms, and 0.5 % of chunks as late again as a TCP retransmission (Linux's 200 ms minimum RTO). */
export const HOSTS_APART_LINK: LinkCondition = { baseMs: 20, jitterMs: 5, retransmitShare: 0.005, retransmitMs: 200 };

const percentile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? -1 : Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))] as number);
};

/** Admission percentiles of the answered calls, and accepted → completed of the echo jobs that completed. */
async function timingsOf(stack: Stack, submissions: Submissions, echoKeys: Set<string>): Promise<RunTimings> {
  const ends: number[] = [];
  for (const [key, answers] of submissions.answers) {
    const jobId = answers[0]?.jobId;
    if (!echoKeys.has(key) || !jobId) continue;
    const job = await stack.ledger.get(jobId).catch(() => undefined);
    if (job?.status === 'completed' && job.completedAt) ends.push(job.completedAt.getTime() - job.acceptedAt.getTime());
  }
  const adm = submissions.admissionMs;
  return {
    admission: { n: adm.length, p50: percentile(adm, 0.5), p99: percentile(adm, 0.99) },
    endToEnd: { n: ends.length, p50: percentile(ends, 0.5), p90: percentile(ends, 0.9) },
  };
}

const each = (n: number) => ({ ...(Object.fromEntries(FAULT_KINDS.map((k) => [k, n])) as Record<FaultKind, number>), redis_master_kill: 0 });
const base = { workers: 3, workerConcurrency: 4, leaseTtlMs: 2_000, sweepIntervalMs: 250 };

export const MODES: Record<SoakConfig['mode'], SoakConfig> = {
  // CI: about two and a half minutes on 2 cores; the costly faults (PostgreSQL, producer restarts) fewer,
  // no Redis OOM (its windows refuse every queue call for up to half a minute: `--redis-oom 4` adds them).
  short: {
    ...base,
    mode: 'short',
    workers: 4,
    jobs: 100,
    faults: { ...each(12), redis_oom: 0, postgres_restart: 4, producer_crash_after_commit: 4, pg_partition: 4, redis_partition: 4, link_latency: 3, deploy: 1 },
    windowMs: 110_000,
    settleTimeoutMs: 60_000,
  },
  // A deploy starts a whole new set of workers beside the old ones: a few per run.
  default: { ...base, mode: 'default', jobs: 600, faults: { ...each(32), deploy: 3 }, windowMs: 660_000, settleTimeoutMs: 180_000 },
  // The soak: 5,000 jobs over 35 minutes with every fault kind, four workers.
  long: { ...base, mode: 'long', workers: 4, jobs: 5_000, faults: { ...each(60), deploy: 6 }, windowMs: 2_100_000, settleTimeoutMs: 900_000 },
};

/** `config` on a Redis Cluster: its masters are killed as often as Redis restarted, and nothing else hits Redis. */
export function onCluster(config: SoakConfig): SoakConfig {
  const f = config.faults;
  return {
    ...config,
    cluster: true,
    faults: { ...f, redis_master_kill: f.redis_restart, redis_flushall: 0, redis_restart: 0, redis_oom: 0, redis_partition: 0 },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (msg: string) => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${msg}`);

/**
 * Ends a run's schedule early (`--stop-at`, SIGUSR2): no more submissions or scheduled faults;
 * the run then heals, runs the closing fault, settles and audits what it submitted, and its
 * result is marked partial.
 */
export interface StopRequest {
  reason?: string;
}

/** Runs one chaos run; `cleanup` collects what an exit handler must kill. */
export async function runSoak(seed: number, config: SoakConfig, cleanup: Array<() => void>, stop: StopRequest = {}): Promise<RunResult> {
  const started = Date.now();
  const rng = new Rng(seed);
  const [workloadRng, scheduleRng, faultRng] = [rng.fork(), rng.fork(), rng.fork()];
  const dir = scratchDir(`runledger-chaos-${seed}-`);
  say(`seed ${seed} (replay with --seed ${seed}), mode ${config.mode}, scratch ${dir}`);
  const pg = await ChaosPostgres.start(dir);
  cleanup.push(() => pg.killNow());
  // Ports 7151–7156 when free; otherwise any.
  const redis = config.cluster ? await ChaosRedisCluster.start(dir, await clusterPorts()) : await ChaosRedis.start(config.redisPolicy);
  cleanup.push(() => redis.killNow());
  let hostsApart: { hosts: HostsApart; condition: LinkCondition } | undefined;
  if (config.hostsApart) {
    if (config.cluster) throw new Error('--hosts-apart runs on the single Redis, not on --cluster');
    if (!canMakeNamespaces()) throw new Error('--hosts-apart needs root and iproute2 (ip netns add failed)');
    const hosts = new HostsApart(String(seed % 1000));
    cleanup.push(() => hosts.remove());
    hostsApart = { hosts, condition: HOSTS_APART_LINK };
  }
  // 20 server connections for 200 clients: producer 20, four workers of 4 + 4, the harness's own go direct.
  const bouncer = config.pgbouncer
    ? await PgBouncer.start({ target: pg.url, port: await freePort(), schema: 'chaos', poolSize: 20, maxClients: 200 })
    : undefined;
  if (bouncer) cleanup.push(() => bouncer.killNow());
  const { hostsApart: _apart, ...stackConfig } = config;
  const stack = await Stack.create(pg, redis, {
    schema: 'chaos',
    ...stackConfig,
    pgbouncer: bouncer,
    logDir: path.join(dir, 'logs'),
    ...(hostsApart ? { hostsApart } : {}),
  });
  cleanup.push(() => stack.killNow());
  const slots = Array.from({ length: config.workers }, (_, i) => `w${i + 1}`);
  await Promise.all([stack.startProducer(), ...slots.map((s) => stack.startWorker(s))]);
  say(
    `PostgreSQL :${pg.port}${bouncer ? ` through PgBouncer :${bouncer.options.port}` : ''}, Redis ${redis.url}, producer :${stack.producerPort}, ${config.workers} workers`,
  );

  const specs = buildWorkload(workloadRng, config.jobs, seed);
  const schedule = buildSchedule(scheduleRng, config.faults, config.windowMs);
  let deadline = Number.POSITIVE_INFINITY;
  const submissions = new Submissions(stack.client, () => deadline);
  const resumer = new ApprovalResumer(stack.ledger, stack.client, submissions);
  let probes = config.jobs;
  const probe = () => submissions.submit(probeSpec(seed, probes++));
  const supervisor = new Supervisor(stack, slots);
  const injector = new FaultInjector(supervisor, faultRng, probe);
  resumer.start();
  supervisor.startWatchdog();
  const progress = new ProgressSampler(stack);
  progress.start(started);

  const t0 = Date.now();
  const inFlight: Array<Promise<void>> = [];
  let scheduledSubmitted = 0;
  const submitting = (async () => {
    for (const spec of specs) {
      await sleep(t0 + (spec.index * config.windowMs) / config.jobs - Date.now());
      if (stop.reason) break;
      inFlight.push(submissions.submit(spec));
      scheduledSubmitted++;
      if (spec.index % 50 === 0) say(`submitted ${spec.index}/${config.jobs}; faults so far ${JSON.stringify(injector.done)}`);
    }
  })();
  const faulting = (async () => {
    for (const f of schedule) {
      await sleep(t0 + f.atMs - Date.now());
      if (stop.reason) break;
      await injector.inject(f.kind);
    }
  })();
  await Promise.all([submitting, faulting]);
  const stopped = stop.reason
    ? { reason: stop.reason, jobsSubmitted: scheduledSubmitted, jobsPlanned: config.jobs, faultsPlanned: schedule.length }
    : undefined;
  say(stopped ? `stopped early (${stopped.reason}): ${scheduledSubmitted} of ${config.jobs} jobs submitted; healing` : 'scheduled faults done; healing');
  await injector.heal();
  // The closing fault: with everything healed and jobs running, kill the worker holding the most
  // leases; every lease held then must end within lease TTL + sweep interval (invariant 7).
  const longJobs = [0, 1, 2, 3].map(() => probeSpec(seed, probes++, { steps: 3, sleepMs: 500 }));
  inFlight.push(...longJobs.map((s) => submissions.submit(s)));
  const watched = await injector.closingKill((owner, killedAt) => watchLeases(stack.ledger, owner, killedAt, 60_000));
  const lease = watched ?? { owner: '-', watched: 0, longestMs: -1, jobId: null, stillHeld: [] };
  say(`closing fault done; longest lease after it: ${lease.longestMs} ms`);
  deadline = Date.now() + config.settleTimeoutMs;
  await Promise.all(inFlight);
  let lastOpen = -1;
  let open = await waitSettled(stack.ledger, submissions, Math.max(0, deadline - Date.now()), (n) => {
    if (n !== lastOpen && n % 10 === 0) say(`${n} job(s) still open`);
    lastOpen = n;
  });
  // Same key and body again → the same job (200); same key, another body → 409.
  for (const spec of specs.filter((s) => s.resubmitAfter)) {
    await submissions.resubmit(spec);
    await submissions.sendConflict(spec);
  }
  open = await waitSettled(stack.ledger, submissions, 5_000);
  say(`settled (${open.length} open); auditing`);
  const timings = await timingsOf(stack, submissions, new Set(specs.filter((s) => s.request.graph === 'echo').map((s) => s.key)));
  await resumer.stop();
  supervisor.stopWatchdog();
  progress.stop();

  const warnings: string[] = [];
  const audit = await auditRun(stack, submissions, warnings);
  for (const x of supervisor.unexpectedExits) warnings.push(`unexpected exit of ${x.target} at ${x.at}: ${x.detail}`);
  for (const d of [...injector.uncleanDrains, ...injector.deploys.uncleanDrains])
    warnings.push(`SIGTERM of ${d.target} did not end in a clean drain: ${d.detail}`);
  for (const d of injector.deploys.deploys) {
    if (d.refused.length + d.leftBehind.length > 0)
      warnings.push(
        `deploy ${d.from} → ${d.to}: upgrade refused ${d.refused.join(', ') || 'none'}; left on an old version ${d.leftBehind.join(', ') || 'none'}`,
      );
  }
  const rej = stack.rejections();
  const partial: Omit<RunResult, 'violations'> = {
    seed,
    mode: config.mode,
    ...(stopped ? { partial: stopped } : {}),
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    config: { ...config },
    audit,
    staleWrites: {
      rejected: rej.leaseLostStops,
      rejectedCheckpointWrites: rej.rejectedCheckpointWrites,
      leaseLostErrorLines: rej.leaseLostErrorLines,
      applied: audit.fencing.staleWritesApplied,
    },
    leaseAfterLastFault: { ...lease, boundMs: config.leaseTtlMs + config.sweepIntervalMs, marginMs: 500 },
    pgPartitions: injector.net.partitions,
    deploys: injector.deploys.deploys,
    progress: progress.samples,
    faults: { injected: injector.done, skipped: injector.skipped, total: Object.values(injector.done).reduce((x, y) => x + y, 0), timeline: injector.timeline },
    unexpectedExits: supervisor.unexpectedExits,
    approvalsResumed: resumer.resumed,
    submissionRetries: submissions.retries,
    timings,
    ...(hostsApart ? { hostsApart: { ...hostsApart.condition } } : {}),
    logDir: path.join(dir, 'logs'),
    warnings,
  };
  const violations = violationsOf(partial);
  await stack.close();
  hostsApart?.hosts.remove();
  await bouncer?.stop();
  await redis.stop();
  // Keep the database of a failed run for inspection (its path is in the result).
  if (violations.length === 0) await pg.remove();
  else await pg.stop();
  return { ...partial, violations, ...(violations.length > 0 ? { keptDatabase: pg.dir } : {}) };
}
