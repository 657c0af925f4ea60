/** Markup that is already safe; everything else interpolated into `html` is escaped. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `value` as HTML text or attribute content. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

function part(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(part).join('');
  return escapeHtml(value);
}

/** Tagged template: interpolated values are escaped (arrays joined, Html kept, null/undefined/false dropped). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  return new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? part(values[i]) : ''), ''));
}

/** A timestamp as ISO text, or a dash. */
export const time = (d: Date | null | undefined): string =>
  d
    ? d
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : '–';

/** A JSON value pretty-printed in a <pre>, or a dash when null. */
export const jsonBlock = (v: unknown): Html => (v === null || v === undefined ? html`<p class="muted">–</p>` : html`<pre>${JSON.stringify(v, null, 2)}</pre>`);

/** A status as a coloured badge. */
export const badge = (status: string): Html => html`<span class="badge s-${status}">${status}</span>`;

/** The whole page: no inline script or style, so a strict Content-Security-Policy can apply. */
export function layout(title: string, body: Html, options: { charts?: boolean } = {}): string {
  const scripts = options.charts
    ? html`<script src="/admin/static/chart.umd.min.js" defer></script><script src="/admin/static/dashboard.js" defer></script>`
    : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Runledger</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/admin/static/dashboard.css">${scripts}</head>
<body><header><a class="brand" href="/admin">Runledger</a><nav><a href="/admin">Jobs</a><a href="/admin/schedules">Schedules</a><a href="/admin/queues">Queue (Bull Board)</a><a href="/docs">API</a></nav></header>
<main>${body}</main></body></html>`.value;
}
