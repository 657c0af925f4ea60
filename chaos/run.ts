// `npm run chaos`: the chaos harness of ARCHITECTURE.md, Invariants.
//   npm run chaos                    default run: ≥ 500 jobs, ≥ 30 faults of every kind (10–20 min)
//   npm run chaos -- --short         CI form, about 3 minutes
//   npm run chaos -- --long          soak (about an hour)
//   npm run chaos -- --seed 42       replays the job mix and fault schedule of seed 42
//   npm run chaos -- --cluster       on a local Redis Cluster, killing its masters (any mode)
//   npm run chaos -- --matrix        the crash-window lab table A–M of ARCHITECTURE.md, Failure → behaviour
//   npm run chaos -- --matrix --windows E,F   only those windows
//   --out DIR                        where <seed>.json goes (default chaos/results)
//   --redis-policy allkeys-lru       the Redis's maxmemory-policy (default noeviction); an evicting one drops deliveries under redis_oom
//   --redis-oom N                    that many redis_oom faults instead of the mode's (short 0, default 32, long 60)
//   --hosts-apart                    producer and workers each on a network namespace of its own, every link 20 ± 5 ms each way (needs root)
//   --pgbouncer                      producer and workers through a PgBouncer in transaction mode (20 server connections; result <seed>-pgbouncer.json)
//   --stop-at HH:MM                  (UTC) end the schedule then, or on SIGUSR2: settle, audit, write a result marked partial
// Exits 1 when any invariant is violated (or any window's verdict fails), 2 on bad arguments.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { REDIS_POLICIES } from './infra';
import { runMatrix } from './matrix';
import { renderProgress } from './progress';
import { table, writeResult } from './report';
import { MODES, onCluster, runSoak, type StopRequest } from './soak';

function parse() {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string' },
      short: { type: 'boolean', default: false },
      long: { type: 'boolean', default: false },
      matrix: { type: 'boolean', default: false },
      cluster: { type: 'boolean', default: false },
      pgbouncer: { type: 'boolean', default: false },
      windows: { type: 'string' },
      'redis-policy': { type: 'string', default: 'noeviction' },
      'redis-oom': { type: 'string' },
      'stop-at': { type: 'string' },
      'hosts-apart': { type: 'boolean', default: false },
      out: { type: 'string', default: path.join(import.meta.dirname, 'results') },
    },
  });
  const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a non-negative integer, got ${values.seed}`);
  if (values.short && values.long) throw new Error('--short and --long exclude each other');
  const policy = REDIS_POLICIES.find((p) => p === values['redis-policy']);
  if (!policy) throw new Error(`--redis-policy takes one of ${REDIS_POLICIES.join(', ')}, got ${values['redis-policy']}`);
  if (values.cluster && policy !== 'noeviction') throw new Error('--redis-policy applies to the single Redis, not to --cluster');
  const redisOom = values['redis-oom'] === undefined ? undefined : Number(values['redis-oom']);
  if (redisOom !== undefined && !(Number.isInteger(redisOom) && redisOom >= 0)) throw new Error(`--redis-oom takes a count, got ${values['redis-oom']}`);
  if (redisOom && values.cluster) throw new Error('--redis-oom applies to the single Redis, not to --cluster');
  if (values['stop-at'] !== undefined && !/^\d{2}:\d{2}$/.test(values['stop-at'])) throw new Error(`--stop-at takes HH:MM (UTC), got ${values['stop-at']}`);
  return { ...values, seed, policy, redisOom };
}

async function main(): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse();
  } catch (err) {
    console.error(`chaos: ${(err as Error).message}`);
    return 2;
  }
  // Every child process dies with the harness, whatever ends it.
  const cleanup: Array<() => void> = [];
  process.on('exit', () => {
    for (const c of cleanup) c();
  });
  for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, () => process.exit(130));

  if (args.matrix) return runMatrix(args.out, cleanup, args.windows?.split(','));
  const chosen = args.long ? MODES.long : args.short ? MODES.short : MODES.default;
  const oom = args.redisOom === undefined ? chosen : { ...chosen, faults: { ...chosen.faults, redis_oom: args.redisOom } };
  const mode = { ...oom, pgbouncer: args.pgbouncer };
  const stop: StopRequest = {};
  process.on('SIGUSR2', () => {
    stop.reason ??= 'SIGUSR2';
  });
  if (args['stop-at']) {
    const at = new Date(`${new Date().toISOString().slice(0, 10)}T${args['stop-at']}:00Z`).getTime();
    setTimeout(() => (stop.reason ??= `--stop-at ${args['stop-at']} UTC`), Math.max(0, at - Date.now())).unref();
  }
  if (args['hosts-apart'] && args.cluster) {
    console.error('chaos: --hosts-apart runs on the single Redis, not on --cluster');
    return 2;
  }
  const config = args.cluster ? onCluster(mode) : { ...mode, redisPolicy: args.policy, hostsApart: args['hosts-apart'] };
  const result = await runSoak(args.seed, config, cleanup, stop);
  console.log(`\n${table(result)}`);
  const file = writeResult(args.out, result);
  const chart = file.replace(/\.json$/, '.svg');
  await renderProgress(
    chart,
    `chaos ${result.mode} run${args.cluster ? ' on Redis Cluster' : ''}${args.pgbouncer ? ' through PgBouncer' : ''}${args['hosts-apart'] ? ', hosts apart' : ''}, seed ${result.seed}: jobs over time`,
    result.progress,
  );
  console.log(`\nresult: ${file} (chart ${chart})\nprocess logs: ${result.logDir}`);
  if (result.keptDatabase) console.log(`database kept for inspection: ${result.keptDatabase}`);
  return result.violations.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`chaos: ${err.stack ?? err.message}`);
    process.exit(1);
  },
);
