// The result of a chaos run: its verdicts against ARCHITECTURE.md, Invariants, the printed table and the JSON.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Audit } from './audit';
import type { FaultKind, FaultRecord } from './faults';
import type { DeployRecord } from './faults-deploy';
import type { PartitionCheck } from './faults-net';
import type { ProgressSample } from './progress';
import type { LeaseWatch } from './settle';

/** Percentiles of a run's answered admissions and of its completed echo jobs, ms. */
export interface RunTimings {
  admission: { n: number; p50: number; p99: number };
  /** Accepted → completed of echo jobs (no approval wait, no effects). */
  endToEnd: { n: number; p50: number; p90: number };
}

export interface RunResult {
  seed: number;
  mode: string;
  /** Set when the schedule was ended early (`--stop-at`, SIGUSR2): the audit covers only the jobs submitted until then. */
  partial?: { reason: string; jobsSubmitted: number; jobsPlanned: number; faultsPlanned: number };
  startedAt: string;
  durationMs: number;
  config: Record<string, unknown>;
  audit: Audit;
  staleWrites: { rejected: number; rejectedCheckpointWrites: number; leaseLostErrorLines: number; applied: number };
  leaseAfterLastFault: LeaseWatch & { boundMs: number; marginMs: number };
  /** Each worker cut off from PostgreSQL past its lease: what it held, stopped and wrote. */
  pgPartitions: PartitionCheck[];
  /** Each rolling deploy of a new graph version: workers started and retired, jobs the operator moved. */
  deploys: DeployRecord[];
  /** In-flight, completed and recoveries every few seconds (drawn in `<seed>.svg`). */
  progress: ProgressSample[];
  faults: { injected: Record<FaultKind, number>; skipped: Record<FaultKind, number>; total: number; timeline: FaultRecord[] };
  /** Processes that died outside a fault (restarted by the harness): findings, with their last output. */
  unexpectedExits: Array<{ at: string; target: string; detail: string; tail?: string }>;
  approvalsResumed: number;
  submissionRetries: number;
  /** What the run's clients and jobs took (the slowdown table of `--hosts-apart` compares them). */
  timings?: RunTimings;
  /** Set for `--hosts-apart`: the one-way condition of every link to PostgreSQL and Redis. */
  hostsApart?: { baseMs: number; jitterMs: number; retransmitShare: number; retransmitMs: number };
  logDir: string;
  /** The PostgreSQL data directory of a failed run, kept for inspection (start it with startEmbeddedPostgres). */
  keptDatabase?: string;
  violations: string[];
  warnings: string[];
}

/** Every broken invariant, one line each; empty when the run passed. */
export function violationsOf(r: Omit<RunResult, 'violations'>): string[] {
  const a = r.audit;
  const v: string[] = [];
  if (a.lost.count > 0)
    v.push(
      `1 lost: ${a.lost.count} accepted job(s) not terminal or parked: ${a.lost.jobs.map((j) => `${j.jobId} ${j.status}${j.note ? ` (${j.note})` : ''}`).join('; ')}`,
    );
  if (a.jobs.completedUnfinished.length > 0) v.push(`1 completed without running to the end: ${a.jobs.completedUnfinished.join('; ')}`);
  const na = a.notAdmitted;
  if (na.ledgerJobsNeverAnswered.length > 0) v.push(`2 not admitted: ledger jobs no client was answered for: ${na.ledgerJobsNeverAnswered.join(', ')}`);
  if (na.orphanBookings.count > 0) v.push(`2 not admitted: ${na.orphanBookings.count} booking(s) of unknown jobs, e.g. ${na.orphanBookings.sample.join(', ')}`);
  if (na.orphanCheckpointThreads.count > 0)
    v.push(`2 not admitted: ${na.orphanCheckpointThreads.count} checkpoint thread(s) of no job, e.g. ${na.orphanCheckpointThreads.sample.join(', ')}`);
  if (a.effects.duplicateEffects > 0) v.push(`3 duplicate effects: ${a.effects.duplicateEffects}: ${a.effects.details.join('; ')}`);
  if (a.effects.silentDuplicates > 0) v.push(`3 silent duplicates with a non-idempotent provider: ${a.effects.silentDuplicates}`);
  if (a.effects.missingBookings > 0) v.push(`3 completed vacation jobs missing a booking: ${a.effects.missingBookings}`);
  if (r.staleWrites.applied > 0) v.push(`4 stale writes applied in ${r.staleWrites.applied} job(s): ${a.fencing.problems.slice(0, 10).join('; ')}`);
  if (r.faults.injected.worker_sigstop > 0 && r.staleWrites.rejected === 0)
    v.push('4 no stale write was rejected although workers were paused past their leases');
  for (const p of r.pgPartitions) {
    if (p.problems.length > 0) v.push(`4 partitioned ${p.target} at ${p.at}: ${p.problems.slice(0, 5).join('; ')}`);
  }
  if (a.versions.count > 0)
    v.push(
      `deploy: ${a.versions.count} row(s) written by a worker not serving the job's version (${a.versions.claims} claims): ${a.versions.sample.join('; ')}`,
    );
  const idem = a.idempotency;
  if (idem.keysAnsweredWithTwoJobs.length > 0) v.push(`6 one key, two jobs: ${idem.keysAnsweredWithTwoJobs.join('; ')}`);
  if (idem.ledgerMismatches.length > 0) v.push(`6 answered job holds another key: ${idem.ledgerMismatches.join('; ')}`);
  if (idem.unexpected.length > 0) v.push(`6 unexpected answers: ${idem.unexpected.join('; ')}`);
  const lease = r.leaseAfterLastFault;
  if (lease.longestMs < 0) v.push('7 not measured: no worker held a lease for the closing fault');
  if (lease.longestMs > lease.boundMs + lease.marginMs) {
    v.push(
      `7 job ${lease.jobId} stayed leased by dead ${lease.owner} ${lease.longestMs} ms after the kill (bound ${lease.boundMs} ms + ${lease.marginMs} ms polling margin)`,
    );
  }
  return v;
}

const sum = (
  ps: PartitionCheck[],
  k: 'held' | 'stoppedBeforeHeal' | 'stoppedOnHeal' | 'claimAnswerLost' | 'endedBefore' | 'rowsWritten' | 'inFlightAtCut' | 'checkpointWritesTried',
) => ps.reduce((n, p) => n + p[k], 0);
const row = (k: string, v: unknown) => `  ${k.padEnd(44)} ${String(v)}`;

/** The table printed at the end of a run. */
export function table(r: RunResult): string {
  const a = r.audit;
  const reasons = (m: Record<string, number>) =>
    Object.entries(m)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || '-';
  const lines = [
    `chaos run: seed ${r.seed}, mode ${r.mode}${r.config.cluster ? ' on Redis Cluster' : `, Redis maxmemory-policy ${r.config.redisPolicy ?? 'noeviction'}`}${r.config.pgbouncer ? ', through PgBouncer (transaction mode)' : ''}, ${(r.durationMs / 1000).toFixed(0)} s${
      r.hostsApart
        ? `, hosts apart (links ${r.hostsApart.baseMs} ± ${r.hostsApart.jitterMs} ms one way, ${r.hostsApart.retransmitShare * 100} % of chunks +${r.hostsApart.retransmitMs} ms)`
        : ''
    }`,
    ...(r.partial
      ? [
          `PARTIAL RUN: schedule stopped early (${r.partial.reason}); ${r.partial.jobsSubmitted} of ${r.partial.jobsPlanned} planned jobs and ${r.faults.total} of ${r.partial.faultsPlanned} planned faults; everything below covers only those`,
        ]
      : []),
    row('jobs submitted / accepted (202|200)', `${a.jobs.submitted} / ${a.jobs.accepted}`),
    row('completed (of which the graph did not finish)', `${a.jobs.completed} (${a.jobs.completedUnfinished.length})`),
    row('parked as designed (interrupted, manual)', `${a.jobs.parkedAsDesigned.interrupted}, ${a.jobs.parkedAsDesigned.manualReconcile}`),
    row('manual_reconcile (reasons)', `${a.jobs.manualReconcile} (${reasons(a.manualReasons)})`),
    row('failed (reasons)', `${a.jobs.failed} (${reasons(a.failedReasons)})`),
    row('LOST', a.lost.count),
    row('duplicate effects (idempotent provider)', a.effects.duplicateEffects),
    row('silent duplicates (non-idempotent provider)', a.effects.silentDuplicates),
    row('effects retried with the same key', a.effects.effectRetries),
    row('tool entries flight/hotel/car', `${a.tools.entries.flight}/${a.tools.entries.hotel}/${a.tools.entries.car}`),
    row('bookings flight/hotel/car', `${a.tools.bookings.flight}/${a.tools.bookings.hotel}/${a.tools.bookings.car}`),
    row('tool re-entries after commit (no call)', a.tools.reentriesAfterCommit),
    row('stale writes rejected / applied', `${r.staleWrites.rejected} / ${r.staleWrites.applied}`),
    row('  checkpoint writes rolled back by the fence', r.staleWrites.rejectedCheckpointWrites),
    row(
      'not admitted but ran',
      a.notAdmitted.ledgerJobsNeverAnswered.length + a.notAdmitted.orphanBookings.count + a.notAdmitted.orphanCheckpointThreads.count,
    ),
    row(
      'same key → same job (duplicates / 409s)',
      `${a.idempotency.keysAnsweredWithTwoJobs.length === 0 ? 'yes' : 'NO'} (${a.idempotency.duplicatesSent} / ${a.idempotency.conflicts409} of ${a.idempotency.conflictsSent})`,
    ),
    row(
      'longest lease after last fault (dead holder)',
      `${r.leaseAfterLastFault.longestMs} ms of ${r.leaseAfterLastFault.watched} lease(s) (bound ${r.leaseAfterLastFault.boundMs} ms)`,
    ),
    row(
      'PG partitions: leases held / stopped before heal / on heal',
      `${sum(r.pgPartitions, 'held')} / ${sum(r.pgPartitions, 'stoppedBeforeHeal')} / ${sum(r.pgPartitions, 'stoppedOnHeal')} (${sum(r.pgPartitions, 'endedBefore')} ended before the cut, ${sum(r.pgPartitions, 'claimAnswerLost')} claims never answered)`,
    ),
    row(
      '  stale rows / in flight at the cut / checkpoints tried',
      `${sum(r.pgPartitions, 'rowsWritten')} / ${sum(r.pgPartitions, 'inFlightAtCut')} / ${sum(r.pgPartitions, 'checkpointWritesTried')}`,
    ),
    row('wrong-version steps (claims) of rows checked', `${a.versions.count} (${a.versions.claims}) of ${a.versions.checked}`),
    row(
      'deploys (jobs moved to the new version)',
      `${r.deploys.map((d) => `${d.from}→${d.to}`).join(', ') || '-'} (${r.deploys.reduce((n, d) => n + d.moved, 0)} moved, ${r.deploys.reduce((n, d) => n + d.refused.length + d.leftBehind.length, 0)} refused or left)`,
    ),
    row('submissions retried after no answer', r.submissionRetries),
    row('approvals resumed', r.approvalsResumed),
    ...(r.timings
      ? [
          row('admission p50 / p99 (answered calls)', `${r.timings.admission.p50} / ${r.timings.admission.p99} ms of ${r.timings.admission.n}`),
          row('echo end to end p50 / p90', `${r.timings.endToEnd.p50} / ${r.timings.endToEnd.p90} ms of ${r.timings.endToEnd.n}`),
        ]
      : []),
    row('faults injected (total)', r.faults.total),
    ...Object.entries(r.faults.injected).map(([k, n]) =>
      row(`  ${k}`, r.faults.skipped[k as FaultKind] ? `${n} (${r.faults.skipped[k as FaultKind]} skipped)` : n),
    ),
    row('VERDICT', r.violations.length === 0 ? 'PASS' : `FAIL (${r.violations.length} violation(s))`),
  ];
  for (const v of r.violations) lines.push(`  VIOLATION ${v}`);
  for (const w of r.warnings.slice(0, 20)) lines.push(`  warning ${w.slice(0, 240)}`);
  if (r.warnings.length > 20) lines.push(`  … ${r.warnings.length - 20} more warnings in the JSON`);
  return lines.join('\n');
}

/** Writes `<dir>/<seed>.json` (`<seed>-cluster.json` on Redis Cluster, `<seed>-<policy>.json` with an evicting Redis, `-pgbouncer` through PgBouncer) and the table beside it; returns the JSON path. */
export function writeResult(dir: string, r: RunResult): string {
  mkdirSync(dir, { recursive: true });
  const policy = r.config.redisPolicy && r.config.redisPolicy !== 'noeviction' ? `-${r.config.redisPolicy}` : '';
  const name = `${r.seed}${r.config.cluster ? '-cluster' : ''}${policy}${r.config.pgbouncer ? '-pgbouncer' : ''}${r.hostsApart ? '-hosts-apart' : ''}`;
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(path.join(dir, `${name}.txt`), `${table(r)}\n`);
  return file;
}
