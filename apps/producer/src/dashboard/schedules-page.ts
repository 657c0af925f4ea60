import type { Cron, GraphLimit } from '@runledger/ledger';
import { type Html, html, layout, time } from './html';

export interface SchedulesPageData {
  crons: Cron[];
  /** More crons exist than `crons` holds (the first page of the list). */
  more: boolean;
  limits: GraphLimit[];
  /** The CSRF field each form carries. */
  csrf: Html;
}

function cronRow(c: Cron, csrf: Html): Html {
  const action = c.enabled ? 'disable' : 'enable';
  const failed = c.lastOutcome === 'failed' ? html`: <strong>${c.lastReason ?? ''}</strong>` : '';
  const last = c.lastOutcome ? html`${c.lastOutcome} (${time(c.lastScheduledAt)})${failed}` : '–';
  return html`<tr><td><code>${c.cronId}</code></td><td>${c.graph}</td><td><code>${c.schedule}</code> ${c.timezone}</td><td>${c.threadId ?? 'new thread per firing'}</td>
<td>${c.missed}</td><td>${c.enabled ? 'on' : 'off'}</td><td>${time(c.nextFireAt)}</td><td>${last}</td>
<td><form method="post" action="/admin/crons/${encodeURIComponent(c.cronId)}/${action}">${csrf}<button type="submit">${action}</button></form></td></tr>`;
}

function limitRow(l: GraphLimit): Html {
  const rate = l.maxPerInterval === null ? '–' : `${l.maxPerInterval} per ${l.intervalMs} ms`;
  const why = l.heldBack > 0 ? html`<strong>${l.heldBack}</strong> waiting in the queue for the limit` : '0';
  return html`<tr><td>${l.graph}</td><td>${rate}</td><td>${l.maxConcurrent ?? '–'}</td><td>${l.running}</td><td>${why}</td></tr>`;
}

/** /admin/schedules: crons (switch on or off) and graph limits with the jobs they hold back now. */
export function schedulesPage(data: SchedulesPageData): string {
  const crons = data.crons.length
    ? html`<table><thead><tr><th>cron</th><th>graph</th><th>schedule</th><th>thread</th><th>missed</th><th>enabled</th><th>next</th><th>latest</th><th></th></tr></thead>
<tbody>${data.crons.map((c) => cronRow(c, data.csrf))}</tbody></table>${data.more ? html`<p class="muted">The first ${data.crons.length} crons; <code>GET /v1/crons</code> pages through all.</p>` : ''}`
    : html`<p class="muted">No crons. Add one with <code>POST /v1/crons</code> or <code>runledger cron-add</code>.</p>`;
  const limits = data.limits.length
    ? html`<table><thead><tr><th>graph</th><th>runs per interval</th><th>at once</th><th>running now</th><th>held back</th></tr></thead>
<tbody>${data.limits.map(limitRow)}</tbody></table>`
    : html`<p class="muted">No graph limits. Set one with <code>runledger limit-set</code>.</p>`;
  return layout(
    'Schedules',
    html`<h1>Schedules</h1><h2>Crons</h2>${crons}
<h2>Graph limits</h2><p class="muted">A held-back job stays accepted and waits, delayed, in the queue; its timeline has a <code>rate_limited</code> event saying which limit.</p>${limits}`,
  );
}
