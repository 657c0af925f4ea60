// `npm start` / `runledger dev`: the zero-setup stack. Embedded PostgreSQL when DATABASE_URL is unset (data in
// RUNLEDGER_HOME/pg, default .runledger/pg), BullMQ on Redis when REDIS_URL is set and on
// PostgreSQL otherwise, the producer and two workers as supervised child processes, and a demo
// `vacation` job shown live. Ctrl-C / SIGTERM stop everything in order, and so does the end of the
// npm that launched it (launcher-watch.ts); a second Ctrl-C kills.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { freePort, isConnectionError, migrate, PG_POOLER_HINT, PG_POOLERS, sessionUrl } from '@runledger/ledger/core';
import { findLangGraphConfig, type LangGraphProject, readLangGraphConfig } from '@runledger/runtime';
import { z } from 'zod';
import { runDemo } from './demo';
import { createPaint, wantsColor } from './format';
import { watchGraphFiles } from './graph-watch';
import { launcherChain, watchLauncher } from './launcher-watch';
import { LocalStack } from './local-stack';
import { canListen, waitForOk } from './ports';
import { redactUrl } from './redact';
import { removeRuntimeInfo, runledgerHome, writeRuntimeInfo } from './runtime-file';

const StartEnv = z.object({
  DATABASE_URL: z.string().optional(),
  /** Behind PgBouncer in transaction mode: the processes read it themselves; the migration here goes direct. */
  RUNLEDGER_PG_POOLER: z.enum(PG_POOLERS, { error: PG_POOLER_HINT }).optional(),
  RUNLEDGER_PG_DIRECT_URL: z.string().optional(),
  REDIS_URL: z.string().optional(),
  QUEUE_BACKEND: z.enum(['redis', 'postgres']).optional(),
  QUEUE_PREFIX: z.string().default('runledger'),
  DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a plain lowercase identifier')
    .default('public'),
  PORT: z.coerce.number().int().min(1).max(65_535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  DRAIN_DEADLINE_MS: z.coerce.number().int().min(100).default(20_000),
  LOG_LEVEL: z.string().default('info'),
  RUNLEDGER_API_KEYS: z.string().optional(),
  RUNLEDGER_ADMIN_KEY: z.string().optional(),
});

const out = (line = '') => process.stdout.write(`${line}\n`);
/** How the user started this, for messages: `runledger dev` runs this module through the CLI. */
const command = process.argv[2] === 'dev' ? 'runledger dev' : 'npm start';
const paint = createPaint(wantsColor(process.stdout));
/** The project served: the working directory (`npm start` runs at the repository root). Its data lives in `home`. */
const root = process.cwd();
const home = runledgerHome(process.env);
const logDir = path.join(home, 'logs');
/** Where the embedded database keeps its data (set once it started; a stand-in under /var/tmp when root's `postgres` user cannot reach `home`). */
let dataDir = path.join(home, 'pg');
/** A path as the user best reads it: relative inside the working directory, absolute outside. */
const shown = (p: string) => {
  const rel = path.relative(process.cwd(), p);
  return rel === '' ? '.' : rel.startsWith('..') ? p : rel;
};

const parsed = StartEnv.safeParse(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== '')));
if (!parsed.success) {
  console.error(`${command}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`);
  process.exit(2);
}
const env = parsed.data;
const backend = env.QUEUE_BACKEND ?? (env.REDIS_URL ? 'redis' : 'postgres');
if (backend === 'redis' && !env.REDIS_URL) {
  console.error(`${command}: QUEUE_BACKEND=redis needs REDIS_URL (e.g. redis://127.0.0.1:6379); unset QUEUE_BACKEND to queue on PostgreSQL.`);
  process.exit(2);
}
if (!(await canListen(env.PORT, env.HOST))) {
  console.error(
    `${command}: PORT ${env.PORT} is already in use on ${env.HOST}. Stop what listens there, or pick another port: PORT=${env.PORT + 1} ${command}`,
  );
  process.exit(1);
}
mkdirSync(logDir, { recursive: true, mode: 0o755 });

let stopping = false;
let exitCode = 0;
const stack = new LocalStack({
  root,
  logDir,
  drainDeadlineMs: env.DRAIN_DEADLINE_MS,
  say: (line) => out(paint.yellow(line)),
  onFatal: (message) => {
    console.error(paint.red(message));
    void shutdown(1);
  },
});

async function shutdown(code: number): Promise<void> {
  exitCode = Math.max(exitCode, code);
  if (stopping) return;
  stopping = true;
  if (stack.pids().length === 0) process.exit(exitCode); // nothing started yet
  out(
    `\nStopping: workers drain (running jobs are handed back at a step boundary, up to ${env.DRAIN_DEADLINE_MS / 1000} s), then the producer and the database stop…`,
  );
  await stack.stop();
  removeRuntimeInfo(home);
  out(env.DATABASE_URL ? 'Stopped.' : `Stopped. The database stays in ${shown(dataDir)} for the next start.`);
  process.exit(exitCode);
}

// One Ctrl-C can arrive more than once: the terminal signals the whole foreground group, and npm
// and tsx relay it too. Only a signal a moment after the first one means "kill now".
const REPEAT_IGNORED_MS = 750;
let firstSignalAt = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (!stopping) {
      firstSignalAt = Date.now();
      return void shutdown(0);
    }
    if (Date.now() - firstSignalAt < REPEAT_IGNORED_MS) return;
    out(`\n${paint.red(`${signal} again: killing every process now.`)}`);
    stack.kill();
    removeRuntimeInfo(home);
    process.exit(130);
  });
}
// A process manager or an IDE signals npm alone, which then exits: stop as on a Ctrl-C. Whoever read
// our output may be gone too, and a failed write must not end this process before its children.
process.stdout.on('error', () => {});
watchLauncher(launcherChain(process.env.npm_execpath), (pid) => {
  out(`\nThe process that started ${command} (pid ${pid}) is gone.`);
  void shutdown(0);
});

const step = (name: string, detail: string) => out(`  ${paint.green('✓')} ${name.padEnd(10)} ${detail}`);
const apiUrl = `http://${env.HOST === '0.0.0.0' || env.HOST === '::' ? '127.0.0.1' : env.HOST}:${env.PORT}`;

/** The graph ids the producer serves, as its LangGraph API lists them (undefined if it cannot say). */
async function servedGraphs(apiKey: string | undefined): Promise<string[] | undefined> {
  try {
    const res = await fetch(`${apiUrl}/assistants/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({ limit: 1000 }),
      signal: AbortSignal.timeout(5_000),
    });
    if (!res.ok) return undefined;
    return ((await res.json()) as Array<{ graph_id: string }>).map((a) => a.graph_id);
  } catch {
    return undefined;
  }
}

/** The banner's Graphs and Auth lines: what the API serves, and whether (and how) it checks keys. */
async function servingLines(apiKey: string | undefined): Promise<void> {
  const graphs = await servedGraphs(apiKey);
  out(`  Graphs       ${graphs ? graphs.map((g) => paint.cyan(g)).join(', ') : 'unknown (see POST /assistants/search)'}`);
  if (!env.RUNLEDGER_API_KEYS && !env.RUNLEDGER_ADMIN_KEY) {
    out(`  Auth         ${paint.yellow('off')}: anyone who reaches ${apiUrl} may submit jobs and open /admin.`);
    out(`               Turn it on: RUNLEDGER_API_KEYS=tenant:key (API) and RUNLEDGER_ADMIN_KEY=key (/admin, /metrics).`);
  } else {
    const tenants = env.RUNLEDGER_API_KEYS ? env.RUNLEDGER_API_KEYS.split(',').filter((k) => k.trim()).length : 0;
    const admin = env.RUNLEDGER_ADMIN_KEY ? 'admin key set (RUNLEDGER_ADMIN_KEY)' : 'no admin key: /admin is closed (set RUNLEDGER_ADMIN_KEY)';
    out(`  Auth         on: ${tenants} tenant key(s) (RUNLEDGER_API_KEYS), ${admin}`);
  }
}

/** The project's own graphs (`runledger dev` beside a langgraph.json), checked before anything starts. */
function projectGraphs(): LangGraphProject | undefined {
  const configPath = findLangGraphConfig(process.env.RUNLEDGER_CONFIG, root);
  return configPath ? readLangGraphConfig(configPath) : undefined;
}

async function main(): Promise<void> {
  const project = projectGraphs();
  out(`${paint.bold('Runledger')}: starting a local stack; each process logs to ${shown(logDir)}/<name>.log`);
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    const t0 = Date.now();
    const db = await stack.startDatabase(path.join(home, 'pg'), process.env);
    databaseUrl = db.url;
    dataDir = db.dataDir;
    step('database', `embedded PostgreSQL on port ${db.port}, data in ${shown(dataDir)} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  } else {
    step('database', `PostgreSQL at ${redactUrl(databaseUrl)} (DATABASE_URL)`);
  }
  // An embedded server is direct; a DATABASE_URL may be a pooler, whose migration takes RUNLEDGER_PG_DIRECT_URL.
  const migrateUrl = env.DATABASE_URL ? sessionUrl({ ...env, DATABASE_URL: env.DATABASE_URL }, `${command}'s migration`) : databaseUrl;
  const applied = await migrate({ connectionString: migrateUrl, schema: env.DB_SCHEMA }).catch((err: Error) => {
    if (!isConnectionError(err) || !env.DATABASE_URL) throw err;
    throw new Error(`PostgreSQL at DATABASE_URL is unreachable (${err.message}): start it, or unset DATABASE_URL to use an embedded one.`);
  });
  // No count: it grows with every release, and README shows this line.
  step('schema', `${env.DB_SCHEMA} ${applied.length > 0 ? 'migrated now, ' : 'is '}up to date`);
  step('queue', backend === 'redis' ? 'BullMQ on Redis (REDIS_URL)' : 'BullMQ on PostgreSQL (set REDIS_URL to use Redis)');

  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    DB_SCHEMA: env.DB_SCHEMA,
    QUEUE_BACKEND: backend,
    QUEUE_PREFIX: env.QUEUE_PREFIX,
    PORT: String(env.PORT),
    HOST: env.HOST,
    LOG_LEVEL: env.LOG_LEVEL,
    // Web apps on this machine may call the API, as with `langgraph dev` (unless configured otherwise).
    RUNLEDGER_DEV: '1',
  };
  const producerPid = stack.startProducer(childEnv);
  // Each worker serves Prometheus metrics on its own port (two cannot share the default 9464).
  const metricsPorts = [await freePort()];
  while (metricsPorts.length < 2) {
    const port = await freePort();
    if (!metricsPorts.includes(port)) metricsPorts.push(port);
  }
  const workerPids = stack.startWorkers(metricsPorts.map((p) => ({ ...childEnv, METRICS_PORT: String(p), METRICS_HOST: '127.0.0.1' })));
  if (!(await waitForOk(`${apiUrl}/readyz`, 60_000, () => stopping))) {
    if (!stopping) throw new Error(`the producer did not become ready at ${apiUrl}/readyz within 60 s; see ${shown(logDir)}/producer.log`);
    return;
  }
  step('producer', `${apiUrl} (pid ${producerPid})`);
  step('workers', `2 running (pids ${workerPids.join(', ')}; metrics on :${metricsPorts.join(', :')})`);
  writeRuntimeInfo(home, {
    pid: process.pid,
    databaseUrl,
    schema: env.DB_SCHEMA,
    queueBackend: backend,
    redisUrl: env.REDIS_URL,
    queuePrefix: env.QUEUE_PREFIX,
    apiUrl,
  });

  // With authentication on, the demo calls the API as the operator, or else as the first tenant.
  const firstKey = env.RUNLEDGER_API_KEYS?.split(',')[0]?.split(':').slice(1).join(':').trim();
  const apiKey = env.RUNLEDGER_ADMIN_KEY ?? (firstKey || undefined);
  if (project) return serveProject(project, apiKey);
  out(`\n${paint.bold('Demo')}: a ${paint.cyan('vacation')} agent books a flight, a hotel and a car in parallel, each through the effects ledger.`);
  const t0 = Date.now();
  const job = await runDemo({
    baseUrl: apiUrl,
    apiKey,
    write: (t) => process.stdout.write(t),
    paint,
    bar: process.stdout.isTTY === true,
    cancelled: () => stopping,
  });
  if (stopping) return;
  if (job?.status === 'completed') {
    const bookings = job.effects.map((e) => (e.result as { confirmation?: string } | null)?.confirmation).filter(Boolean);
    out(`  ${paint.green(`Demo job completed in ${((Date.now() - t0) / 1000).toFixed(1)} s`)}: ${bookings.join(', ')} (one row each in example_bookings).`);
  } else {
    out(paint.yellow(`  The demo job is ${job?.status ?? 'still running'}; inspect it with: npx runledger job ${job?.jobId ?? '<id>'}`));
  }
  out(`\n${paint.bold('Runledger is running.')}`);
  out(`  API          ${apiUrl}`);
  out(`  API docs     ${apiUrl}/docs`);
  out(`  Bull Board   ${apiUrl}/admin/queues`);
  out(`  Dashboard    ${apiUrl}/admin`);
  out(`  Playground   ${apiUrl}/playground`);
  out(`  Logs         ${shown(logDir)}/*.log`);
  await servingLines(apiKey);
  out(
    `Try: npx runledger jobs  ·  npx runledger submit vacation --input '{"delays":{"car":8000}}'  ·  kill -9 a worker (pids ${stack.workerPids().join(', ')}) and npx runledger watch <id>`,
  );
  out(paint.dim('Ctrl-C stops everything (a second Ctrl-C kills at once).'));
}

/** `runledger dev` in a project: its graphs instead of the demo. */
async function serveProject(project: LangGraphProject, apiKey: string | undefined): Promise<void> {
  out(`\n${paint.bold('Runledger is running')} your graphs from ${shown(project.configPath)}: ${project.graphs.map((g) => paint.cyan(g.id)).join(', ')}`);
  out(`  API          ${apiUrl}   (POST /v1/jobs {"graph":"${project.graphs[0]?.id ?? '<id>'}","input":{…}})`);
  out(`  Dashboard    ${apiUrl}/admin`);
  out(`  Logs         ${shown(logDir)}/*.log`);
  await servingLines(apiKey);
  out(paint.dim('Ctrl-C stops everything (a second Ctrl-C kills at once). A change to a graph file reloads the graphs.'));
  reloadOnChange();
}

/** Restarts the workers (drained, jobs handed over) and the producer when a file of the project changes. */
function reloadOnChange(): void {
  let reloading = false;
  let pending: string | undefined;
  const reload = async (file: string): Promise<void> => {
    if (stopping) return;
    if (reloading) {
      pending = file;
      return;
    }
    reloading = true;
    out(paint.yellow(`\n${file} changed: reloading the graphs (the workers drain and hand their jobs over, the producer restarts)…`));
    try {
      const pids = await stack.restartServers();
      if (await waitForOk(`${apiUrl}/readyz`, 60_000, () => stopping)) {
        out(`  ${paint.green('✓')} reloaded   producer pid ${pids.producer}, workers pids ${pids.workers.join(', ')}`);
      } else if (!stopping) out(paint.red(`  the producer did not come back within 60 s; see ${shown(logDir)}/producer.log`));
    } catch (err) {
      if (!stopping) out(paint.red(`  reload failed: ${(err as Error).message}`));
    } finally {
      reloading = false;
    }
    const next = pending;
    pending = undefined;
    if (next) await reload(next);
  };
  watchGraphFiles(root, (file) => void reload(file));
}

main().catch((err: Error) => {
  if (stopping) return;
  console.error(paint.red(`${command}: ${err.message}`));
  void shutdown(1);
});
