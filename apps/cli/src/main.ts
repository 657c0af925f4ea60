// `runledger` (npx runledger …): the operator CLI. Talks to the ledger and the queue directly,
// reading DATABASE_URL, DB_SCHEMA, REDIS_URL, QUEUE_BACKEND, QUEUE_PREFIX, RUNLEDGER_GRAPHS.
import { parseArgs } from 'node:util';
import { parseCliEnv } from './cli-env';
import { CliError } from './cli-error';
import { COMMANDS } from './commands/index';
import type { CliContext } from './context';
import { redactUrl } from './redact';
import { staleBuildWarning } from './stale-build';
import { didYouMean } from './suggest';
import { USAGE } from './usage';

const COMMON = { 'database-url': { type: 'string' }, schema: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

/** One readable line for any failure: what happened and what to do. Never a stack trace. */
function explain(err: unknown, ctx: CliContext | undefined): string {
  const e = err as Error & { code?: string };
  if (err instanceof CliError) return err.message;
  const where = ctx?.env.databaseUrl ? redactUrl(ctx.env.databaseUrl) : 'DATABASE_URL';
  // LedgerError codes, matched by value: importing the ledger only for instanceof would slow `--help`.
  if (e.code === 'DATABASE_UNAVAILABLE') {
    const cause = (e.cause as Error | undefined)?.message ?? e.message;
    return `PostgreSQL is unreachable at ${where} (${cause}): start it, or set DATABASE_URL to a running server.`;
  }
  if (e.code === '42P01' || e.code === '3F000') return `Schema "${ctx?.env.schema}" has no Runledger tables at ${where}: run \`npx runledger migrate\` first.`;
  if (e.code === '28P01' || e.code === '28000') return `PostgreSQL refused the login at ${where} (${e.message}): check the user and password in DATABASE_URL.`;
  if (e.code === '3D000') return `${e.message} at ${where}: create it, or fix DATABASE_URL.`;
  return e?.message ?? String(err);
}

/**
 * Commands that become a long-running process configured from the environment, as `npm start`,
 * `npm run producer` and `npm run worker` are; they exit by themselves (signals, fatal errors).
 */
const PROCESSES: Record<string, () => Promise<unknown>> = {
  dev: () => import('./start'),
  producer: () => import('@runledger/producer/main'),
  worker: () => import('@runledger/worker/main'),
};

/**
 * `worker --graphs a,b:2`: the worker's pool, handed over as RUNLEDGER_WORKER_GRAPHS (the worker
 * checks it). Returns the arguments left.
 */
function poolFlag(args: string[]): string[] {
  const { values, positionals } = parseArgs({ args, options: { graphs: { type: 'string' } }, allowPositionals: true, strict: false });
  if (typeof values.graphs === 'string') process.env.RUNLEDGER_WORKER_GRAPHS = values.graphs;
  else if (values.graphs !== undefined) throw new CliError('worker: --graphs needs a list, e.g. --graphs echo,vacation:2', 2);
  const unknown = Object.keys(values).filter((k) => k !== 'graphs');
  return [...positionals, ...unknown.map((k) => `--${k}`)];
}

async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const processCommand = PROCESSES[name];
  if (processCommand) {
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const args = name === 'worker' ? poolFlag(rest) : rest;
    if (args.length > 0)
      throw new CliError(`${name} takes no arguments (it reads the environment${name === 'worker' ? ', and --graphs' : ''}); got ${args.join(' ')}.`, 2);
    await processCommand();
    return new Promise<number>(() => {});
  }
  const command = COMMANDS[name];
  if (!command) {
    const names = [...Object.keys(COMMANDS), ...Object.keys(PROCESSES), 'help'];
    throw new CliError(`unknown command "${name}".${didYouMean(name, names, ' Run `npx runledger --help` for the list.')}`, 2);
  }
  let parsed: ReturnType<typeof parseArgs>;
  const own = Object.fromEntries([
    ...command.flags.map((f) => [f, { type: 'string' as const }]),
    ...(command.switches ?? []).map((f) => [f, { type: 'boolean' as const }]),
  ]);
  const options = { ...COMMON, ...own };
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      // Name the unknown flag as typed and suggest the closest one this command accepts.
      const { tokens } = parseArgs({ args: rest, options, allowPositionals: true, strict: false, tokens: true });
      const unknown = tokens.find((t) => t.kind === 'option' && !(t.name in options));
      if (unknown?.kind === 'option') {
        const flags = Object.keys(options).map((f) => `--${f}`);
        const hint = didYouMean(unknown.rawName, flags, ` Run \`npx runledger ${name} --help\` for its options.`);
        throw new CliError(`${name}: unknown option "${unknown.rawName}".${hint}`, 2);
      }
    }
    throw new CliError(`${name}: ${(err as Error).message}`, 2);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length !== command.args.length) {
    const shape = command.args.map((a) => `<${a}>`).join(' ');
    throw new CliError(`${name} takes ${command.args.length ? shape : 'no arguments'}; got ${positionals.length ? positionals.join(' ') : 'none'}.`, 2);
  }
  const env = parseCliEnv(process.env, { databaseUrl: values['database-url'] as string | undefined, schema: values.schema as string | undefined });
  const { CliContext } = await import('./context');
  const ctx = new CliContext(env);
  try {
    return (await command.run(ctx, positionals, values as Record<string, string | boolean | undefined>)) ?? 0;
  } catch (err) {
    throw err instanceof CliError ? err : new CliError(explain(err, ctx));
  } finally {
    await ctx.close();
  }
}

process.on('unhandledRejection', (err) => {
  process.stderr.write(`runledger: ${explain(err, undefined).split('\n')[0]}\n`);
  process.exit(1);
});

const stale = staleBuildWarning(import.meta.filename);
if (stale) process.stderr.write(`${stale}\n`);

try {
  process.exit(await run(process.argv.slice(2)));
} catch (err) {
  process.stderr.write(`runledger: ${explain(err, undefined)}\n`);
  process.exit(err instanceof CliError ? err.exitCode : 1);
}
