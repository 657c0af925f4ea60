import {
  ALL_STATUSES,
  conversationOf,
  countThreadCheckpoints,
  interruptQuestions,
  type Job,
  type JobStatus,
  noLiveWorkerServes,
  unservedLine,
} from '@runledger/ledger/core';
import { CliError } from '../cli-error';
import type { CliContext } from '../context';
import { conversationLines } from '../conversation-text';
import { ago, compact, offset, summarizeResult, table, when } from '../format';
import { describeEvent } from '../progress';

export interface ListOptions {
  status?: string;
  graph?: string;
  threadId?: string;
  limit?: number;
  json?: boolean;
}

/** `runledger jobs`: the newest jobs as a table, filtered by status, graph or thread. */
export async function listJobs(ctx: CliContext, o: ListOptions): Promise<void> {
  if (o.status && !ALL_STATUSES.includes(o.status as JobStatus)) {
    throw new CliError(`--status must be one of ${ALL_STATUSES.join(', ')}; got "${o.status}".`, 2);
  }
  const [page, unserved] = await Promise.all([
    ctx.ledger.list({ status: o.status as JobStatus | undefined, graph: o.graph, threadId: o.threadId, limit: o.limit ?? 20 }),
    ctx.ledger.countWaitingForVersion(),
  ]);
  if (o.json) {
    ctx.print(JSON.stringify(page));
    return;
  }
  if (page.jobs.length === 0) {
    ctx.print('No jobs match. Submit one: npx runledger submit echo');
    return;
  }
  const now = new Date();
  // A waiting job says what for: the job holding its thread (its first 8 characters), or a worker.
  const status = (j: Job) =>
    j.blockedBy
      ? `${j.status}, waits for ${j.blockedBy.slice(0, 8)}`
      : j.versionServed === false
        ? `${j.status}, ${noLiveWorkerServes(j.graph, j.graphVersion)}`
        : j.status;
  // A job on a thread of its own (the thread id is the job id) shows "-" rather than its id twice.
  const thread = (j: Job) => (j.threadId === j.jobId ? '-' : j.threadId);
  const rows = page.jobs.map((j) => [j.jobId, j.graph, status(j), `${j.attempt}/${j.maxAttempts}`, ago(j.acceptedAt, now), j.leaseOwner ?? '-', thread(j)]);
  ctx.print(table(['JOB', 'GRAPH', 'STATUS', 'ATTEMPT', 'ACCEPTED', 'LEASE OWNER', 'THREAD'], rows));
  if (page.nextCursor) ctx.print(ctx.paint.dim(`(newest ${page.jobs.length} shown; raise --limit to see more)`));
  // Over the whole ledger, not just this page: jobs that cannot run until a worker serving them starts.
  for (const w of unserved) ctx.print(ctx.paint.yellow(`Waiting: ${unservedLine(w)}; start a worker serving it (see runledger doctor).`));
}

function details(job: Job): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['status', job.status],
    ['graph', job.graph],
    ['thread', job.threadId === job.jobId ? `${job.threadId} (its own)` : job.threadId],
    ['attempt', `${job.attempt} of ${job.maxAttempts}`],
    ['fencing token', String(job.fencingToken)],
    ['lease', job.leaseOwner ? `${job.leaseOwner} until ${when(job.leaseExpiresAt)}` : '-'],
    ['deliveries', `${job.deliveries}${job.deliveryId ? ` (last ${job.deliveryId})` : ''}`],
    ['accepted', when(job.acceptedAt)],
    ['started', when(job.startedAt)],
    ['first checkpoint', when(job.firstCheckpointAt)],
    ['finished', when(job.completedAt)],
  ];
  if (!conversationOf(job.input)) rows.push(['input', compact(job.input, 120)]);
  if (job.idempotencyKey) rows.push(['idempotency key', job.idempotencyKey]);
  if (job.recoveryReason) rows.push(['recovery reason', job.recoveryReason]);
  if (job.blockedBy) rows.push(['waits for thread', `job ${job.blockedBy} holds thread ${job.threadId}; this job runs after it`]);
  if (job.result !== null && job.result !== undefined && !conversationOf(job.result)) rows.push(['result', summarizeResult(job.result, 200)]);
  if (job.error !== null && job.error !== undefined) rows.push(['error', compact(job.error, 200)]);
  if (job.interrupt !== null && job.interrupt !== undefined) {
    for (const q of interruptQuestions(job.interrupt)) rows.push([job.status === 'interrupted' ? 'the graph asks' : 'it asked', q]);
  }
  return rows;
}

/** `runledger job <id>`: the job's fields, timeline, effects and its thread's checkpoint count. */
export async function showJob(ctx: CliContext, jobId: string, json = false): Promise<void> {
  const { ledger, paint } = ctx;
  const job = await ledger.get(jobId);
  const [events, effects, checkpoints] = await Promise.all([
    ledger.events(jobId),
    ledger.effects(jobId),
    countThreadCheckpoints(ledger.pool, job.tenant, job.threadId),
  ]);
  if (json) {
    ctx.print(JSON.stringify({ job, events, effects, checkpoints }));
    return;
  }
  ctx.print(paint.bold(`Job ${job.jobId}`));
  for (const [k, v] of details(job)) ctx.print(`  ${k.padEnd(17)} ${v}`);
  for (const [title, value] of [
    ['Input', job.input],
    ['Conversation', job.result],
  ] as const) {
    const messages = conversationOf(value);
    if (messages) ctx.print('', paint.bold(`${title} (${messages.length} messages)`), ...conversationLines(messages, paint));
  }
  ctx.print('', paint.bold(`Timeline (${events.length} events)`));
  ctx.print(
    table(
      ['  AT', 'EVENT', 'ATTEMPT', 'TOKEN', 'WORKER', 'DETAIL'],
      events.map((e) => [`  ${offset(e.at, job.acceptedAt)}`, e.type, String(e.attempt), String(e.fencingToken), e.workerId ?? '-', describeEvent(e)]),
    ),
  );
  ctx.print('', paint.bold(`Effects (${effects.length})`));
  if (effects.length === 0) ctx.print('  none');
  else {
    const rows = effects.map((e) => [`  ${e.name}`, e.status, String(e.attempts), compact(e.status === 'failed' ? e.error : e.result, 60), e.effectKey]);
    ctx.print(table(['  NAME', 'STATUS', 'ATTEMPTS', 'RESULT', 'KEY'], rows));
  }
  ctx.print('', `${paint.bold('Checkpoints')} of thread ${job.threadId}: ${checkpoints}`);
}
