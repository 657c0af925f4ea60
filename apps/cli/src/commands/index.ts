import { CliError, parseIntFlag, parseJsonFlag } from '../cli-error';
import type { CliContext } from '../context';

type Flags = Record<string, string | boolean | undefined>;

/** One CLI command: its positional arguments, its own string flags, and what it does. */
export interface Command {
  args: string[];
  flags: string[];
  /** Flags that take no value (`--replay`). */
  switches?: string[];
  run(ctx: CliContext, args: string[], flags: Flags): Promise<number | undefined>;
}

const str = (flags: Flags, name: string) => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);

function required(flags: Flags, name: string, example: string): string {
  const v = str(flags, name);
  if (v === undefined) throw new CliError(`--${name} is required, e.g. --${name} ${example}.`, 2);
  return v;
}

const jobId = (args: string[]) => args[0] as string;

// Each command's module is imported only when it runs: the ledger, BullMQ and LangGraph take
// seconds to load on a small machine, and `--help` or a usage mistake should answer at once.

/** Every `runledger` command by name. */
export const COMMANDS: Record<string, Command> = {
  submit: {
    args: ['graph'],
    flags: ['input', 'thread', 'key', 'max-attempts'],
    run: async (ctx, [graph], f) => {
      const input = str(f, 'input');
      const maxAttempts = str(f, 'max-attempts');
      const { submit } = await import('./submit');
      await submit(ctx, {
        graph: graph as string,
        input: input === undefined ? {} : parseJsonFlag('--input', input),
        threadId: str(f, 'thread'),
        idempotencyKey: str(f, 'key'),
        maxAttempts: maxAttempts === undefined ? undefined : parseIntFlag('--max-attempts', maxAttempts, 1, 100),
        json: f.json === true,
      });
      return 0;
    },
  },
  jobs: {
    args: [],
    flags: ['status', 'graph', 'thread', 'limit'],
    run: async (ctx, _a, f) => {
      const limit = str(f, 'limit');
      const { listJobs } = await import('./jobs');
      await listJobs(ctx, {
        status: str(f, 'status'),
        graph: str(f, 'graph'),
        threadId: str(f, 'thread'),
        limit: limit === undefined ? undefined : parseIntFlag('--limit', limit, 1, 500),
        json: f.json === true,
      });
      return 0;
    },
  },
  job: { args: ['id'], flags: [], run: async (ctx, a, f) => void (await (await import('./jobs')).showJob(ctx, jobId(a), f.json === true)) },
  watch: { args: ['id'], flags: [], run: async (ctx, a) => (await import('./watch')).watchJob(ctx, jobId(a)) },
  cancel: { args: ['id'], flags: ['note'], run: async (ctx, a, f) => void (await (await import('./operate')).cancel(ctx, jobId(a), str(f, 'note'))) },
  resume: {
    args: ['id'],
    flags: ['value'],
    run: async (ctx, a, f) => {
      const value = parseJsonFlag('--value', required(f, 'value', `'{"approved":true}'`));
      await (await import('./operate')).resume(ctx, jobId(a), value);
      return 0;
    },
  },
  replay: { args: ['id'], flags: ['note'], run: async (ctx, a, f) => void (await (await import('./operate')).replay(ctx, jobId(a), str(f, 'note'))) },
  resolve: {
    args: ['id'],
    flags: ['outcome', 'note'],
    run: async (ctx, a, f) => {
      const outcome = required(f, 'outcome', 'completed');
      if (outcome !== 'completed' && outcome !== 'failed') throw new CliError(`--outcome must be completed or failed, got "${outcome}".`, 2);
      const note = required(f, 'note', `'booked by hand, see ticket 42'`);
      await (await import('./operate')).resolve(ctx, jobId(a), outcome, note);
      return 0;
    },
  },
  reconcile: {
    args: [],
    flags: ['grace-ms'],
    run: async (ctx, _a, f) => {
      const grace = str(f, 'grace-ms');
      const graceMs = grace === undefined ? 5_000 : parseIntFlag('--grace-ms', grace, 0);
      await (await import('./reconcile')).reconcile(ctx, graceMs);
      return 0;
    },
  },
  crons: { args: [], flags: [], run: async (ctx, _a, f) => void (await (await import('./schedule')).listCrons(ctx, f.json === true)) },
  'cron-add': {
    args: ['graph'],
    flags: ['schedule', 'input', 'timezone', 'thread', 'missed'],
    run: async (ctx, [graph], f) => {
      const missed = str(f, 'missed') ?? 'run-once';
      if (missed !== 'run-once' && missed !== 'skip') throw new CliError(`--missed must be run-once or skip, got "${missed}".`, 2);
      const input = str(f, 'input');
      await (await import('./schedule')).addCron(ctx, {
        graph: graph as string,
        schedule: required(f, 'schedule', `'0 3 * * *'`),
        timezone: str(f, 'timezone'),
        input: input === undefined ? {} : parseJsonFlag('--input', input),
        threadId: str(f, 'thread'),
        missed,
      });
      return 0;
    },
  },
  'cron-enable': { args: ['id'], flags: [], run: async (ctx, a) => void (await (await import('./schedule')).setCronEnabled(ctx, a[0] as string, true)) },
  'cron-disable': { args: ['id'], flags: [], run: async (ctx, a) => void (await (await import('./schedule')).setCronEnabled(ctx, a[0] as string, false)) },
  'cron-delete': { args: ['id'], flags: [], run: async (ctx, a) => void (await (await import('./schedule')).deleteCron(ctx, a[0] as string)) },
  limits: { args: [], flags: [], run: async (ctx, _a, f) => void (await (await import('./schedule')).listLimits(ctx, f.json === true)) },
  'limit-set': {
    args: ['graph'],
    flags: ['max', 'interval-ms', 'concurrent'],
    run: async (ctx, [graph], f) => {
      const n = (name: string) => (str(f, name) === undefined ? undefined : parseIntFlag(`--${name}`, str(f, name) as string, 1));
      const limit = { maxPerInterval: n('max'), intervalMs: n('interval-ms'), maxConcurrent: n('concurrent') };
      if (limit.maxPerInterval === undefined && limit.maxConcurrent === undefined)
        throw new CliError('Give --max N [--interval-ms MS] and/or --concurrent N.', 2);
      await (await import('./schedule')).setLimit(ctx, graph as string, limit);
      return 0;
    },
  },
  'limit-remove': { args: ['graph'], flags: [], run: async (ctx, a) => void (await (await import('./schedule')).removeLimit(ctx, a[0] as string)) },
  keys: {
    args: ['action'],
    flags: ['to', 'batch'],
    run: async (ctx, [action], f) => {
      const keys = await import('./keys');
      if (action === 'status') return void (await keys.keysStatus(ctx, f.json === true));
      if (action !== 'rotate') throw new CliError(`keys takes status or rotate, got "${action}".`, 2);
      const batch = str(f, 'batch');
      return keys.keysRotate(ctx, { to: str(f, 'to'), batch: batch === undefined ? 200 : parseIntFlag('--batch', batch, 1, 10_000) });
    },
  },
  migrate: { args: [], flags: [], run: async (ctx) => void (await (await import('./migrate')).migrateSchema(ctx)) },
  doctor: { args: [], flags: [], run: async (ctx) => (await import('./doctor')).doctor(ctx) },
  upgrade: {
    args: [],
    flags: ['graph', 'from', 'to', 'job', 'note'],
    switches: ['replay'],
    run: async (ctx, _a, f) =>
      (await import('./upgrade')).upgrade(ctx, {
        graph: required(f, 'graph', 'vacation'),
        from: required(f, 'from', 'v1'),
        to: required(f, 'to', 'v2'),
        replay: f.replay === true,
        jobId: str(f, 'job'),
        note: str(f, 'note'),
        json: f.json === true,
      }),
  },
};
