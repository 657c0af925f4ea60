import { ALL_STATUSES, type Job, noLiveWorkerServes, unservedLine } from '@runledger/ledger';
import { badge, type Html, html, layout, time } from './html';

/** The list's filters as they arrive in the query string. */
export interface ListFilter {
  status?: string;
  graph?: string;
  threadId?: string;
  cursor?: string;
}

export interface ListPageData {
  counts: Record<string, number>;
  filter: ListFilter;
  jobs: Job[];
  nextCursor: string | null;
  graphs: string[];
  /** Chart window in hours. */
  hours: number;
  /** Jobs ready to run that no live worker serves, by graph and version (Ledger.countWaitingForVersion). */
  unserved: Array<{ graph: string; version: string | null; count: number }>;
}

/** Query string of `filter` with `extra` applied (undefined removes a key). */
export function listUrl(filter: ListFilter, extra: Partial<Record<keyof ListFilter | 'hours', string | undefined>> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...filter, ...extra })) if (v) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `/admin?${qs}` : '/admin';
}

const jobUrl = (jobId: string) => `/admin/jobs/${encodeURIComponent(jobId)}`;

function countsBar(counts: Record<string, number>, filter: ListFilter): Html {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const cell = (status: string | undefined, label: string, n: number) =>
    html`<a class="count${filter.status === status ? ' current' : ''}" href="${listUrl({ ...filter, status, cursor: undefined })}"><span class="n">${n}</span><span>${label}</span></a>`;
  return html`<section class="counts" aria-label="Jobs by status">${cell(undefined, 'all', total)}${ALL_STATUSES.map((s) => cell(s, s, counts[s] ?? 0))}</section>`;
}

function filterForm(filter: ListFilter, graphs: string[]): Html {
  const option = (value: string, current: string | undefined) =>
    html`<option value="${value}"${value === (current ?? '') ? html` selected` : ''}>${value || 'any'}</option>`;
  return html`<form class="filters" method="get" action="/admin">
<label>Status <select name="status">${['', ...ALL_STATUSES].map((s) => option(s, filter.status))}</select></label>
<label>Graph <select name="graph">${['', ...graphs].map((g) => option(g, filter.graph))}</select></label>
<label>Thread <input name="threadId" value="${filter.threadId ?? ''}" placeholder="thread id"></label>
<button type="submit">Filter</button> <a href="/admin">Clear</a></form>`;
}

/** A job's thread, linked to the thread's jobs; blank for a job on a thread of its own (same id), the usual case. */
const threadCell = (j: Job) =>
  j.threadId === j.jobId
    ? html`<span class="muted" title="a thread of its own">–</span>`
    : html`<a href="${listUrl({ threadId: j.threadId })}">${j.threadId}</a>`;

/** Graphs and versions whose jobs wait for a worker, over the whole ledger: the list alone would look healthy. */
function unservedBanner(unserved: ListPageData['unserved']): Html | string {
  if (unserved.length === 0) return '';
  return html`<p class="error" role="status">Jobs that cannot run now: ${unserved.map((w, i) => html`${i > 0 ? '; ' : ''}${unservedLine(w)}`)}. Start a worker serving it (<span class="mono">runledger doctor</span> says how).</p>`;
}

/** The status, and for a job no live worker serves, that it waits for one. */
const statusCell = (j: Job) =>
  j.versionServed === false && j.status !== 'interrupted'
    ? html`${badge(j.status)} <span class="muted">${noLiveWorkerServes(j.graph, j.graphVersion)}</span>`
    : badge(j.status);

function jobTable(jobs: Job[]): Html {
  if (jobs.length === 0) return html`<p class="muted">No jobs match.</p>`;
  const row = (j: Job) => html`<tr data-job-id="${j.jobId}">
<td><a href="${jobUrl(j.jobId)}">${j.jobId}</a></td><td>${j.graph}</td><td class="mono">${threadCell(j)}</td><td>${statusCell(j)}</td>
<td>${j.attempt}/${j.maxAttempts}</td><td>${time(j.acceptedAt)}</td><td>${time(j.updatedAt)}</td></tr>`;
  return html`<table class="jobs"><thead><tr><th>Job</th><th>Graph</th><th>Thread</th><th>Status</th><th>Attempt</th><th>Accepted</th><th>Updated</th></tr></thead>
<tbody>${jobs.map(row)}</tbody></table>`;
}

function charts(filter: ListFilter, hours: number): Html {
  const windows = [1, 6, 24, 168];
  return html`<section class="charts"><h2>Last ${hours} h</h2>
<p class="windows">${windows.map((h) => html`<a href="${listUrl(filter, { hours: String(h) })}"${h === hours ? html` class="current"` : ''}>${h} h</a> `)}</p>
<figure><figcaption>Jobs entering each status, per time bucket</figcaption><div class="chart-box"><canvas id="transitions-chart" data-src="/admin/api/transitions?hours=${hours}"></canvas></div></figure>
<figure><figcaption>Recovery time: recovery_required → next claim (ms)</figcaption><div class="chart-box"><canvas id="recovery-chart" data-src="/admin/api/recoveries?hours=${hours}"></canvas></div></figure>
</section>`;
}

/** The dashboard's front page: counts by status, filters, one page of jobs, the charts. */
export function listPage(d: ListPageData): string {
  const paging = html`<nav class="paging">${d.filter.cursor ? html`<a href="${listUrl(d.filter, { cursor: undefined })}">« First page</a>` : ''}
${d.nextCursor ? html`<a rel="next" href="${listUrl(d.filter, { cursor: d.nextCursor })}">Next page »</a>` : ''}</nav>`;
  const body = html`<h1>Jobs</h1>${unservedBanner(d.unserved)}${countsBar(d.counts, d.filter)}${filterForm(d.filter, d.graphs)}${jobTable(d.jobs)}${paging}${charts(d.filter, d.hours)}`;
  return layout('Jobs', body, { charts: true });
}
