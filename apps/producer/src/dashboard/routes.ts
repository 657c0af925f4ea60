import { ALL_STATUSES, Crons, DashboardReads, type JobStatus, WebhookOutbox } from '@runledger/ledger';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { toHttpError } from '../http-errors';
import type { RouteDeps } from '../options';
import { csrfField, parseFormBody } from '../security';
import { dashboardAssets } from './assets';
import { chartWindow, recoveriesChart, transitionsChart } from './chart-data';
import { Html } from './html';
import { jobPage, messagePage } from './job-page';
import { type ListFilter, listPage } from './list-page';
import { type ActionForm, actionNotice, DASHBOARD_ACTIONS, type DashboardAction, performAction } from './operator-actions';
import { schedulesPage } from './schedules-page';

const PAGE_SIZE = 50;
const hide = { schema: { hide: true } };
const sendHtml = (reply: FastifyReply, body: string, code = 200) => reply.code(code).type('text/html; charset=utf-8').send(body);

/** A short text field of the query string, or undefined. */
const field = (q: Record<string, unknown>, key: string): string | undefined => {
  const v = q[key];
  return typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, 500) : undefined;
};

/** Chart window from `?hours=` (1 to 720, default 24). */
const hoursOf = (q: Record<string, unknown>): number => Math.min(720, Math.max(1, Math.round(Number(field(q, 'hours') ?? 24)) || 24));

/**
 * The ledger dashboard at /admin: server-rendered pages (list with filters and keyset paging,
 * job page with timeline, effects and checkpoints), confirmed operator actions (forms carry the CSRF field security checks),
 * the JSON behind the charts, and the static files. Registered as an encapsulated plugin: its
 * form parser applies to its own routes only.
 */
export async function dashboardRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { ledger } = deps;
  const reads = new DashboardReads(ledger.pool);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, parseFormBody);
  await app.register(dashboardAssets);

  app.get('/admin', hide, async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const status = field(q, 'status');
    const filter: ListFilter = {
      status: status && ALL_STATUSES.includes(status as JobStatus) ? status : undefined,
      graph: field(q, 'graph'),
      threadId: field(q, 'threadId'),
      cursor: /^\d+$/.test(field(q, 'cursor') ?? '') ? field(q, 'cursor') : undefined,
    };
    const [counts, page, unserved] = await Promise.all([
      ledger.countByStatus(),
      ledger.list({ ...filter, status: filter.status as JobStatus | undefined, limit: PAGE_SIZE }),
      ledger.countWaitingForVersion(),
    ]);
    const graphs = [...deps.graphs.keys()];
    return sendHtml(reply, listPage({ counts, filter, jobs: page.jobs, nextCursor: page.nextCursor, graphs, hours: hoursOf(q), unserved }));
  });

  app.get('/admin/jobs/:jobId', hide, async (request, reply) => {
    const { jobId } = request.params as { jobId: string };
    const q = request.query as Record<string, unknown>;
    let job: Awaited<ReturnType<typeof ledger.get>>;
    try {
      job = await ledger.get(jobId);
    } catch (err) {
      const http = toHttpError(err);
      return sendHtml(reply, messagePage('Job not shown', http.message, '/admin'), http.statusCode);
    }
    const [events, effects, checkpoints, annotations, webhook] = await Promise.all([
      ledger.events(jobId),
      ledger.effects(jobId),
      reads.threadCheckpoints(job.tenant, job.threadId),
      reads.jobAnnotations(jobId),
      new WebhookOutbox(ledger).ofJob(jobId),
    ]);
    const done = field(q, 'done') as DashboardAction | undefined;
    const notice = done && DASHBOARD_ACTIONS.includes(done) ? actionNotice(done, q.enqueued === undefined ? undefined : q.enqueued === 'true') : undefined;
    const traceId = annotations?.traceContext?.split('-')[1] ?? null;
    return sendHtml(
      reply,
      jobPage({
        job,
        events,
        effects,
        webhooks: webhook?.hasWebhook ? webhook.deliveries : undefined,
        checkpoints,
        traceId,
        prunedAt: annotations?.prunedAt ?? null,
        notice,
        csrf: csrfField(request),
      }),
    );
  });

  app.post('/admin/jobs/:jobId/:action', hide, async (request, reply) => {
    const { jobId, action } = request.params as { jobId: string; action: string };
    const back = `/admin/jobs/${encodeURIComponent(jobId)}`;
    if (!DASHBOARD_ACTIONS.includes(action as DashboardAction)) return sendHtml(reply, messagePage('Unknown action', `No action ${action}.`, back), 404);
    try {
      const done = await performAction(deps, action as DashboardAction, jobId, (request.body ?? {}) as ActionForm, request.log);
      const qs = new URLSearchParams({ done: action, ...(done.enqueued === undefined ? {} : { enqueued: String(done.enqueued) }) });
      return reply.redirect(`${back}?${qs}`, 303);
    } catch (err) {
      const http = toHttpError(err);
      if (http.statusCode >= 500) request.log.error({ err }, `dashboard ${action} of ${jobId} failed`);
      return sendHtml(reply, messagePage(`Could not ${action}`, http.message, back), http.statusCode);
    }
  });

  const crons = new Crons(ledger);
  app.get('/admin/schedules', hide, async (request, reply) => {
    const [page, limits] = await Promise.all([crons.list(), ledger.limits.list()]);
    return sendHtml(reply, schedulesPage({ crons: page.crons, more: page.nextCursor !== null, limits, csrf: new Html(csrfField(request)) }));
  });

  app.post('/admin/crons/:cronId/:action', hide, async (request, reply) => {
    const { cronId, action } = request.params as { cronId: string; action: string };
    if (action !== 'enable' && action !== 'disable') return sendHtml(reply, messagePage('Unknown action', `No action ${action}.`, '/admin/schedules'), 404);
    try {
      await crons.update(cronId, { enabled: action === 'enable' });
      return reply.redirect('/admin/schedules', 303);
    } catch (err) {
      const http = toHttpError(err);
      return sendHtml(reply, messagePage(`Could not ${action}`, http.message, '/admin/schedules'), http.statusCode);
    }
  });

  app.get('/admin/api/transitions', hide, async (request) => transitionsChart(reads, chartWindow(hoursOf(request.query as Record<string, unknown>))));
  app.get('/admin/api/recoveries', hide, async (request) => recoveriesChart(reads, chartWindow(hoursOf(request.query as Record<string, unknown>))));
}
