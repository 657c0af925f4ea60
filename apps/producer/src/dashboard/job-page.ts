import { type Effect, isTerminal, type Job, type JobEvent, resumePrefill, type WebhookDelivery } from '@runledger/ledger';
import { questionSection, rawJson, stateSection } from './conversation-html';
import { badge, Html, html, jsonBlock, layout, time } from './html';

export interface JobPageData {
  job: Job;
  events: JobEvent[];
  effects: Effect[];
  /** The job's webhook deliveries (one per run end); undefined when the job has no webhook. */
  webhooks?: WebhookDelivery[];
  checkpoints: { count: number; latestId: string | null };
  traceId: string | null;
  prunedAt: Date | null;
  /** A line to show above the job (the outcome of an action just taken). */
  notice?: string;
  /** The hidden CSRF input every action form carries (security's csrfField). */
  csrf: string;
}

const actionUrl = (job: Job, action: string) => `/admin/jobs/${encodeURIComponent(job.jobId)}/${action}`;

/** A form that only submits once the person ticks the confirmation box. */
function confirmForm(csrf: Html, job: Job, action: string, title: string, confirm: string, fields: Html | string = ''): Html {
  return html`<form class="action" method="post" action="${actionUrl(job, action)}" data-action="${action}">
${csrf}<h3>${title}</h3>${fields}
<label class="confirm"><input type="checkbox" name="confirm" value="yes" required> ${confirm}</label>
<button type="submit" name="action" value="${action}">${title}</button></form>`;
}

const note = html`<label>Note <input name="note" maxlength="500" placeholder="why (kept in the timeline)"></label>`;

/** A job an operator may move to another version: it has one, and waits for a worker serving it or is parked. */
function waitsForVersion(job: Job): boolean {
  if (job.graphVersion === null) return false;
  return job.status === 'interrupted' || ((job.status === 'accepted' || job.status === 'recovery_required') && job.versionServed === false);
}

function actions(job: Job, csrf: Html): Html {
  if (isTerminal(job.status)) return html``;
  const forms: Html[] = [];
  if (job.status === 'interrupted') {
    forms.push(
      confirmForm(
        csrf,
        job,
        'resume',
        'Resume',
        'I have read the interrupt and want the graph to continue with this value.',
        html`<label>Resume value (JSON) <textarea name="value" required rows="3">${resumePrefill(job.interrupt)}</textarea></label>`,
      ),
    );
  }
  if (job.status === 'manual_reconcile') {
    forms.push(
      confirmForm(
        csrf,
        job,
        'replay',
        'Replay',
        'I checked the provider: the effect in doubt did not happen, or calling it again with the same key is safe.',
        note,
      ),
      confirmForm(
        csrf,
        job,
        'resolve',
        'Resolve',
        'I settled this job by hand and record the outcome below.',
        html`<label>Outcome <select name="outcome"><option value="completed">completed</option><option value="failed">failed</option></select></label>${note}`,
      ),
    );
  }
  if (waitsForVersion(job)) {
    forms.push(
      confirmForm(
        csrf,
        job,
        'upgrade',
        'Upgrade',
        `Run this job on the version above instead of ${job.graph}@${job.graphVersion}; its timeline records the move.`,
        html`<label>To version <input name="to" required maxlength="200" placeholder="v2"></label>
<label class="option"><input type="checkbox" name="replay" value="yes"> Replay from the stored input if that version cannot resume its checkpoints</label>${note}`,
      ),
    );
  }
  forms.push(confirmForm(csrf, job, 'cancel', 'Cancel', 'Stop this job for good; a running attempt loses its lease.', note));
  return html`<section class="actions"><h2>Actions</h2>${forms}</section>`;
}

function inDoubt(d: JobPageData): Html {
  if (d.job.status !== 'manual_reconcile') return html``;
  const pending = d.effects.filter((e) => e.status === 'pending');
  const reason = [...d.events].reverse().find((e) => e.type === 'manual_reconcile')?.detail;
  return html`<section class="doubt"><h2>Needs a person</h2>
<p>Reason: <strong>${d.job.recoveryReason ?? String(reason?.reason ?? 'unknown')}</strong>. The provider may or may not have done these effects:</p>
<ul>${pending.map((e) => html`<li><strong>${e.name}</strong> <span class="mono">${e.effectKey}</span> · idempotency key <span class="mono">${e.idempotencyKey}</span> · ${e.attempts} attempt(s)</li>`)}</ul>
${pending.length === 0 ? jsonBlock(reason ?? null) : ''}</section>`;
}

function timeline(events: JobEvent[], prunedAt: Date | null): Html {
  if (events.length === 0) return html`<p class="muted">${prunedAt ? `History removed by retention at ${time(prunedAt)}.` : 'No events.'}</p>`;
  const row = (
    e: JobEvent,
  ) => html`<tr><td>${time(e.at)}</td><td>${e.type}</td><td>${e.attempt}</td><td>${e.fencingToken}</td><td class="mono">${e.workerId ?? '–'}</td>
<td><code>${Object.keys(e.detail).length ? JSON.stringify(e.detail) : ''}</code></td></tr>`;
  return html`<table class="timeline"><thead><tr><th>At</th><th>Event</th><th>Attempt</th><th>Token</th><th>Worker</th><th>Detail</th></tr></thead><tbody>${events.map(row)}</tbody></table>`;
}

function effects(list: Effect[]): Html {
  if (list.length === 0) return html`<p class="muted">No effects.</p>`;
  const row = (e: Effect) => html`<tr><td class="mono">${e.effectKey}</td><td>${e.name}</td><td>${badge(e.status)}</td><td>${e.attempts}</td>
<td><code>${JSON.stringify(e.status === 'failed' ? e.error : e.result)}</code></td></tr>`;
  return html`<table class="effects"><thead><tr><th>Key</th><th>Name</th><th>Status</th><th>Attempts</th><th>Result / error</th></tr></thead><tbody>${list.map(row)}</tbody></table>`;
}

/** Each run end announced to the job's webhook, and every attempt with its answer (HTTP status or error). */
function webhookDeliveries(list: WebhookDelivery[] | undefined): Html | string {
  if (list === undefined) return '';
  const answer = (a: WebhookDelivery['attempts'][number]) =>
    html`<li>${time(a.at)}: #${a.attempt} ${a.statusCode === null ? `no answer (${a.error ?? ''})` : `HTTP ${a.statusCode}`}</li>`;
  const row = (d: WebhookDelivery) => html`<tr><td class="mono">${d.deliveryId}</td><td>${badge(d.runStatus)}</td><td>${badge(d.state)}</td>
<td>${d.dueAt ? time(d.dueAt) : ''}</td><td><ul>${d.attempts.map(answer)}</ul></td></tr>`;
  const table =
    list.length === 0
      ? html`<p class="muted">The run has not ended yet: nothing to deliver.</p>`
      : html`<table class="webhooks"><thead><tr><th>webhook-id</th><th>Run end</th><th>Delivery</th><th>Next attempt</th><th>Attempts</th></tr></thead><tbody>${list.map(row)}</tbody></table>`;
  return html`<h2>Webhook</h2>${table}`;
}

/** Why a job no live worker serves does not run (or would not, once resumed). */
function versionWait(j: Job, item: (k: string, v: unknown) => Html): Html | string {
  if (j.versionServed !== false) return '';
  const pair = html`<span class="mono">${j.graph}@${j.graphVersion ?? '*'}</span>`;
  return item('Served by', html`no live worker serves ${pair}: ${j.status === 'interrupted' ? 'a resume would wait for one' : 'the job waits for one'}`);
}

/**
 * Why a waiting job is held back by its graph's limit: the `rate_limited` event of its current
 * attempt (record_rate_limited.sql writes one per attempt), or nothing once it ran or left.
 */
function heldBack(d: JobPageData): string | null {
  const j = d.job;
  if (j.status !== 'accepted' && j.status !== 'recovery_required') return null;
  const e = [...d.events].reverse().find((x) => x.type === 'rate_limited');
  if (!e || e.attempt !== j.attempt) return null;
  const { graph, reason, maxPerInterval, intervalMs, maxConcurrent } = e.detail as Record<string, unknown>;
  const why =
    reason === 'rate'
      ? `at most ${maxPerInterval} claims per ${intervalMs} ms, and the window is full`
      : reason === 'concurrency'
        ? `at most ${maxConcurrent} of its runs may hold a lease at once, and that many do`
        : 'other claims of the graph were queued on its limit';
  return `by the limit of graph ${String(graph)}: ${why}. It waits in the queue (delayed) and tries again, never failed.`;
}

function summary(d: JobPageData): Html {
  const j = d.job;
  const held = heldBack(d);
  const item = (k: string, v: unknown) => html`<dt>${k}</dt><dd>${v}</dd>`;
  return html`<dl class="summary">${item('Status', badge(j.status))}${item('Graph', j.graph)}${item('Thread', j.threadId === j.jobId ? html`<span class="muted">its own (same id as the job)</span>` : html`<a class="mono" href="/admin?threadId=${encodeURIComponent(j.threadId)}">${j.threadId}</a>`)}
${item('Version', j.graphVersion === null ? html`<span class="muted">any</span>` : html`<span class="mono">${j.graphVersion}</span>`)}${versionWait(j, item)}
${item('Tenant', j.tenant)}${item('Attempt', `${j.attempt} of ${j.maxAttempts}`)}${item('Fencing token', j.fencingToken)}${item('Lease', j.leaseOwner ? `${j.leaseOwner} until ${time(j.leaseExpiresAt)}` : '–')}
${item('Accepted', time(j.acceptedAt))}${item('Started', time(j.startedAt))}${item('First checkpoint', time(j.firstCheckpointAt))}${item('Finished', time(j.completedAt))}
${j.blockedBy ? item('Waiting for', html`job <a class="mono" href="/admin/jobs/${encodeURIComponent(j.blockedBy)}">${j.blockedBy}</a>, which holds its thread`) : ''}${held ? item('Held back', held) : ''}${item('Deliveries', j.deliveries)}${item('Checkpoints', d.checkpoints.count ? html`${d.checkpoints.count} · latest <span class="mono">${d.checkpoints.latestId}</span>` : '0')}
${item('Trace', d.traceId ? html`<span class="mono">${d.traceId}</span>` : '–')}${item('Idempotency key', j.idempotencyKey ?? '–')}</dl>`;
}

/**
 * One job: summary, what needs a person (a parked graph's question above the resume form), actions
 * behind a confirmation, input and result (LangChain messages as a conversation, raw JSON one
 * click away), timeline, effects.
 */
export function jobPage(d: JobPageData): string {
  const j = d.job;
  const result = j.result === null || j.result === undefined ? html`` : stateSection('Result', 'result', j.result);
  const error = j.error === null || j.error === undefined ? html`` : html`<section id="error"><h2>Error</h2>${jsonBlock(j.error)}</section>`;
  const body = html`<p><a href="/admin">« Jobs</a></p><h1>Job <span class="mono" id="job-id">${j.jobId}</span></h1>
${d.notice ? html`<p class="notice" role="status">${d.notice}</p>` : ''}${summary(d)}${inDoubt(d)}${j.status === 'interrupted' ? questionSection(j.interrupt) : ''}${actions(j, new Html(d.csrf))}
${stateSection('Input', 'input', j.input)}${result}${error}${j.interrupt && j.status !== 'interrupted' ? html`<section><h2>Interrupt</h2>${rawJson(j.interrupt, 'Raw interrupt')}</section>` : ''}
<h2>Timeline</h2>${timeline(d.events, d.prunedAt)}<h2>Effects</h2>${effects(d.effects)}${webhookDeliveries(d.webhooks)}`;
  return layout(`Job ${j.jobId}`, body);
}

/** A short page for a refused or failed action, with a way back. */
export function messagePage(title: string, message: string, back: string): string {
  return layout(title, html`<h1>${title}</h1><p class="error" role="alert">${message}</p><p><a href="${back}">« Back</a></p>`);
}
