import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { isAdminSessionRevoked, revokeAdminSession, takeRateToken } from '@runledger/ledger';
import Fastify, { type FastifyInstance } from 'fastify';
import { createAdmitter } from './admitter';
import { DEFAULT_MAX_BACKLOG, limitBacklog } from './backlog';
import { bullBoard } from './bull-board';
import { dashboardRoutes } from './dashboard/routes';
import { installErrorHandlers } from './http-errors';
import { corsOptions, langGraphApi, testHookRoutes } from './langgraph-api';
import { installMetrics, ProducerMetrics } from './metrics';
import { type AppOptions, DEFAULT_CRON_LIMITS, type RouteDeps } from './options';
import { answerOversizedBeforeBody } from './oversized-body';
import { playgroundRoutes } from './playground/routes';
import { actionRoutes } from './routes/actions';
import { batchRoutes } from './routes/batch';
import { cronRoutes } from './routes/crons';
import { healthRoutes } from './routes/health';
import { jobRoutes } from './routes/jobs';
import { threadRoutes } from './routes/threads';
import { installSecurity, type SecuredAppOptions, securedServerOptions } from './security';
import { watchServedVersions } from './served-versions';
import { type ObservabilityOptions, traceAdmissions } from './telemetry';
import { clientErrorHandler, frameworkErrors } from './transport-errors';
import { WebhookDestinations } from './webhooks/destinations';
import { webhookRoutes } from './webhooks/routes';
import { installZodCompilers, openApiTransform } from './zod-compilers';

export type { AppOptions } from './options';

const QUEUE_ERROR_LOG_EVERY_MS = 10_000;

/** Logs the queue's connection errors (at most one line per 10 s) instead of BullMQ's console.error. */
function watchQueueErrors(app: FastifyInstance, queue: AppOptions['queue']): void {
  let lastLoggedAt = 0;
  const onError = (err: Error) => {
    if (Date.now() - lastLoggedAt < QUEUE_ERROR_LOG_EVERY_MS) return;
    lastLoggedAt = Date.now();
    app.log.warn({ err: err.message }, 'queue connection error; admissions still commit, the reconciler delivers later');
  };
  queue.on('error', onError);
  app.addHook('onClose', async () => {
    queue.off('error', onError);
  });
}

/**
 * Builds the producer's HTTP app: the /v1 API, /healthz, /readyz, /openapi.json with a UI at
 * /docs, the dashboard at /admin, the LangGraph playground at /playground, Bull Board at /admin/queues and `/` redirecting to one of them. Nothing listens yet (call `listen` or `inject`);
 * closing the app leaves the ledger pool and the queue to the caller.
 */
export function buildApp(options: AppOptions & SecuredAppOptions & ObservabilityOptions): FastifyInstance {
  const bodyLimit = options.bodyLimitBytes ?? 1024 * 1024;
  const app = Fastify({
    // Timeouts and a logger that redacts keys, passwords and payloads.
    ...securedServerOptions(options.security, options.logger ?? false),
    bodyLimit,
    // Job ids are UUIDs; keep room for user thread ids and idempotency keys in paths.
    routerOptions: { maxParamLength: 500 },
    // Errors raised before routing, and by the HTTP parser, answer in the API's shape too.
    frameworkErrors,
    clientErrorHandler,
  });
  installZodCompilers(app);
  installErrorHandlers(app);
  answerOversizedBeforeBody(app, bodyLimit);
  // Before the security hooks: a browser's preflight carries no key, and is answered here.
  if (options.cors) void app.register(cors, corsOptions(options.cors));
  // Before any route: its hooks cover every route, the dashboard's and Bull Board's included.
  installSecurity(
    app,
    options.security,
    {
      revoke: (sessionId, expiresAt) => revokeAdminSession(options.ledger.pool, sessionId, expiresAt),
      isRevoked: (sessionId) => isAdminSessionRevoked(options.ledger.pool, sessionId),
    },
    (key, perSecond, burst) => takeRateToken(options.ledger.pool, key, perSecond, burst),
  );

  const enqueueTimeoutMs = options.enqueueTimeoutMs ?? 1_000;
  const batching = options.groupCommit || undefined;
  const admitter = traceAdmissions(
    options.tracer,
    limitBacklog(
      createAdmitter({
        ledger: options.ledger,
        queue: options.queue,
        enqueueTimeoutMs,
        batchWindowMs: batching ? (batching.windowMs ?? 1) : 0,
        maxBatch: batching?.maxBatch ?? 128,
        crashAt: options.crashAt,
      }),
      options.queue,
      options.maxBacklog ?? DEFAULT_MAX_BACKLOG,
      enqueueTimeoutMs,
    ),
  );
  app.addHook('onClose', () => admitter.close());
  const deps: RouteDeps = {
    ledger: options.ledger,
    queue: options.queue,
    graphs: options.graphs,
    graphConfig: options.graphConfig ?? {},
    schema: options.schema,
    enqueueTimeoutMs,
    admitter,
    cronLimits: options.cronLimits ?? DEFAULT_CRON_LIMITS,
    served: watchServedVersions(options.ledger),
    webhooks: options.webhooks ?? { destinations: new WebhookDestinations([]) },
    store: options.store,
  };

  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Runledger',
        version: '0.1.0',
        description:
          'Crash-safe background jobs for LangGraph.js agents. Every error is { "error": { "code", "message" } }, including those raised before a route runs: 400 invalid_url, 400 bad_request, 408 request_timeout, 414 uri_too_long, 415 unsupported_media_type (JSON must be UTF-8), 431 headers_too_large.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'A tenant key (RUNLEDGER_API_KEYS) or the admin key' },
          apiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Api-Key',
            description: 'The same keys, as the LangGraph SDK sends them; used when no Authorization header is sent',
          },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }],
      tags: [
        { name: 'jobs' },
        { name: 'actions' },
        { name: 'threads' },
        { name: 'health' },
        { name: 'langgraph', description: 'The LangGraph Server API, as the official @langchain/langgraph-sdk Client calls it' },
      ],
    },
    transform: openApiTransform,
  });
  void app.register(swaggerUi, { routePrefix: '/docs' });
  void app.register(jobRoutes, deps);
  void app.register(batchRoutes, deps);
  void app.register(cronRoutes, deps);
  void app.register(actionRoutes, deps);
  void app.register(threadRoutes, deps);
  void app.register(webhookRoutes, deps);
  void app.register(healthRoutes, deps);
  void app.register(langGraphApi, { ...deps, streams: options.streams, threadState: options.threadState, customAuth: options.security?.customAuth });
  if (options.testHooks) void app.register(testHookRoutes, deps);
  void app.register(dashboardRoutes, deps);
  void app.register(playgroundRoutes);
  installMetrics(app, new ProducerMetrics(options.ledger, options.queue));
  void app.register(bullBoard, { queue: options.queue, ledgerJobUrl: options.ledgerJobUrl ?? ((id) => `/admin/jobs/${encodeURIComponent(id)}`) });
  watchQueueErrors(app, options.queue);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The root leads somewhere: a browser to the dashboard when it can open it (auth off, or an
  // admin key configured; /admin then asks for the key), everything else to the API docs.
  const dashboardReachable = Boolean(options.security?.adminKey) || !options.security?.apiKeys?.length;
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    const browser = (request.headers.accept ?? '').includes('text/html');
    return reply.redirect(browser && dashboardReachable ? '/admin' : '/docs', 302);
  });
  return app;
}
