// The end-of-run audit: every invariant of ARCHITECTURE.md, Invariants, read back from the ledger and from what
// the clients were answered. Violations fail the run; warnings are reported beside them.
import { chaosAudit, ExampleBookings, type Job, type OrphanCount, TERMINAL_STATUSES, type WrongVersionCount } from '../packages/ledger/src/index';
import type { Submissions } from './clients';
import type { Stack } from './stack';
import { fencingProblems, listAllJobs, toolReport, unfinishedResult } from './timeline';
import type { JobSpec } from './workload';

export interface Audit {
  jobs: {
    submitted: number;
    accepted: number;
    inLedger: number;
    completed: number;
    failed: number;
    cancelled: number;
    parkedAsDesigned: { interrupted: number; manualReconcile: number };
    manualReconcile: number;
    /** Completed, but the result shows the graph never ran to its end. */
    completedUnfinished: string[];
  };
  manualReasons: Record<string, number>;
  failedReasons: Record<string, number>;
  lost: { count: number; jobs: Array<{ jobId: string; graph: string; status: string; note?: string }> };
  notAdmitted: { ledgerJobsNeverAnswered: string[]; orphanBookings: OrphanCount; orphanCheckpointThreads: OrphanCount };
  effects: { duplicateEffects: number; silentDuplicates: number; missingBookings: number; effectRetries: number; details: string[] };
  tools: { entries: Record<string, number>; bookings: Record<string, number>; reentriesAfterCommit: number };
  fencing: { staleWritesApplied: number; problems: string[] };
  /** Rows (claims, steps, checkpoints, ends) a worker wrote for a job of a version it did not serve, from job_events and workers.info. */
  versions: WrongVersionCount;
  idempotency: {
    keysAnsweredWithTwoJobs: string[];
    ledgerMismatches: string[];
    duplicatesSent: number;
    conflictsSent: number;
    conflicts409: number;
    unexpected: string[];
  };
  /** The timelines of jobs named by a violation (at most 15), one line per event. */
  evidence: Record<string, string[]>;
}

const bump = (m: Record<string, number>, k: string) => {
  m[k] = (m[k] ?? 0) + 1;
};

function reasonOf(job: Job): string {
  const err = job.error as { code?: string; message?: string } | null;
  return job.status === 'failed' ? String(err?.code ?? err?.message ?? 'unknown') : String(job.recoveryReason ?? 'unknown');
}

const PARKED = ['interrupted', 'manual_reconcile'];

/** Reads the ledger and returns the audit; `warnings` gets findings that are not §9 violations. */
export async function auditRun(stack: Stack, submissions: Submissions, warnings: string[]): Promise<Audit> {
  const { ledger } = stack;
  const provider = new ExampleBookings(stack.pool);
  const accepted = submissions.accepted();
  const ledgerJobs = await listAllJobs(ledger);
  const byId = new Map(ledgerJobs.map((j) => [j.jobId, j]));
  const a: Audit = {
    jobs: {
      submitted: submissions.specs.size,
      accepted: accepted.size,
      inLedger: ledgerJobs.length,
      completed: 0,
      failed: 0,
      cancelled: 0,
      parkedAsDesigned: { interrupted: 0, manualReconcile: 0 },
      manualReconcile: 0,
      completedUnfinished: [],
    },
    manualReasons: {},
    failedReasons: {},
    lost: { count: 0, jobs: [] },
    notAdmitted: {
      ledgerJobsNeverAnswered: ledgerJobs.filter((j) => !accepted.has(j.jobId)).map((j) => j.jobId),
      orphanBookings: await chaosAudit.orphanBookings(stack.pool),
      orphanCheckpointThreads: await chaosAudit.orphanCheckpointThreads(stack.pool),
    },
    effects: { duplicateEffects: 0, silentDuplicates: 0, missingBookings: 0, effectRetries: 0, details: [] },
    tools: { entries: { flight: 0, hotel: 0, car: 0 }, bookings: { flight: 0, hotel: 0, car: 0 }, reentriesAfterCommit: 0 },
    fencing: { staleWritesApplied: 0, problems: [] },
    versions: await chaosAudit.wrongVersionSteps(stack.pool),
    idempotency: idempotencyChecks(submissions, byId),
    evidence: {},
  };
  const suspects = new Set<string>();
  for (const [jobId, spec] of accepted) {
    const job = byId.get(jobId);
    if (!job) {
      a.lost.jobs.push({ jobId, graph: spec.request.graph, status: 'missing from the ledger' });
      continue;
    }
    classify(a, job, spec, warnings);
    const events = await ledger.events(jobId);
    const problems = fencingProblems(job, events);
    if (problems.length > 0) a.fencing.staleWritesApplied++;
    a.fencing.problems.push(...problems);
    const unfinished = unfinishedResult(job, events);
    if (unfinished) a.jobs.completedUnfinished.push(`${jobId}: ${unfinished}`);
    if (problems.length > 0 || unfinished) suspects.add(jobId);
    if (spec.request.graph !== 'vacation') continue;
    const tools = await toolReport(ledger, (id) => provider.countBookings(id), jobId, events);
    a.tools.reentriesAfterCommit += tools.reentriesAfterCommit;
    a.effects.effectRetries += tools.effects.reduce((n, f) => n + f.attempts - 1, 0);
    for (const kind of ['flight', 'hotel', 'car'] as const) {
      a.tools.entries[kind] = (a.tools.entries[kind] ?? 0) + tools.entries[kind];
      a.tools.bookings[kind] = (a.tools.bookings[kind] ?? 0) + tools.bookings[kind];
      const n = tools.bookings[kind];
      if (n > 1 && spec.kind === 'vacation') a.effects.duplicateEffects++;
      if (n > 1 && spec.kind === 'vacation_non_idempotent') a.effects.silentDuplicates++;
      if (n === 0 && job.status === 'completed') a.effects.missingBookings++;
      if (n > 1 || (n === 0 && job.status === 'completed')) {
        a.effects.details.push(`job ${jobId} (${spec.kind}, ${job.status}): ${n} ${kind} bookings`);
        suspects.add(jobId);
      }
    }
  }
  a.lost.count = a.lost.jobs.length;
  for (const j of a.lost.jobs) suspects.add(j.jobId);
  for (const id of [...suspects].slice(0, 15)) {
    a.evidence[id] = (await ledger.events(id)).map(
      (e) =>
        `${e.at.toISOString()} ${e.type} attempt=${e.attempt} token=${e.fencingToken} worker=${e.workerId ?? '-'} ${JSON.stringify(e.detail).slice(0, 160)}`,
    );
  }
  return a;
}

function classify(a: Audit, job: Job, spec: JobSpec, warnings: string[]): void {
  if (job.status === 'completed') a.jobs.completed++;
  else if (job.status === 'failed') {
    a.jobs.failed++;
    bump(a.failedReasons, reasonOf(job));
    warnings.push(`job ${job.jobId} (${spec.kind}) failed: ${JSON.stringify(job.error)}`);
  } else if (job.status === 'cancelled') a.jobs.cancelled++;
  else if (job.status === 'interrupted') {
    // A resumed approval must complete; one the harness never resumes stays parked by design.
    if (spec.resume) a.lost.jobs.push({ jobId: job.jobId, graph: job.graph, status: job.status, note: 'resumed approval did not complete' });
    else a.jobs.parkedAsDesigned.interrupted++;
  } else if (job.status === 'manual_reconcile') {
    a.jobs.manualReconcile++;
    bump(a.manualReasons, reasonOf(job));
    if (spec.kind === 'vacation_non_idempotent') a.jobs.parkedAsDesigned.manualReconcile++;
    else warnings.push(`job ${job.jobId} (${spec.kind}) is in manual_reconcile (${reasonOf(job)}) though none of its effects needs a person`);
  }
  if (!TERMINAL_STATUSES.includes(job.status) && !PARKED.includes(job.status)) a.lost.jobs.push({ jobId: job.jobId, graph: job.graph, status: job.status });
}

function idempotencyChecks(submissions: Submissions, byId: Map<string, Job>): Audit['idempotency'] {
  const keysAnsweredWithTwoJobs: string[] = [];
  const ledgerMismatches: string[] = [];
  let duplicatesSent = 0;
  for (const [key, answers] of submissions.answers) {
    duplicatesSent += answers.length - 1;
    if (new Set(answers.map((x) => x.jobId)).size > 1) keysAnsweredWithTwoJobs.push(`${key}: ${answers.map((x) => `${x.status} ${x.jobId}`).join(', ')}`);
    const job = answers[0] ? byId.get(answers[0].jobId) : undefined;
    if (job && job.idempotencyKey !== key) ledgerMismatches.push(`${key}: answered job ${job.jobId} holds key ${job.idempotencyKey}`);
  }
  const unexpected = [
    ...submissions.refused.map((r) => `${r.key}: refused ${r.status} ${r.code}`),
    ...submissions.gaveUp.map((k) => `${k}: no answer before the deadline`),
    ...submissions.conflicts.unexpected.map((c) => `${c.key}: conflicting body answered ${c.status}, expected 409`),
  ];
  const { sent, refused409 } = submissions.conflicts;
  return { keysAnsweredWithTwoJobs, ledgerMismatches, duplicatesSent, conflictsSent: sent, conflicts409: refused409, unexpected };
}
