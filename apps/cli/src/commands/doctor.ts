import type { CliContext } from '../context';
import { redactUrl } from '../redact';
import { type CheckResult, checkPostgres, checkQueue, checkRedis, checkSchema, checkServed, checkWorkers } from './doctor-checks';

/**
 * `runledger doctor`: checks PostgreSQL (reachable, version), the schema's migrations, the queue
 * (Redis eviction policy and persistence, or BullMQ's PostgreSQL backend), live workers and whether they
 * serve every waiting job's graph and version; prints
 * what to fix for each failure. Returns 0 when everything passed, 1 otherwise.
 */
export async function doctor(ctx: CliContext): Promise<number> {
  const { env, paint } = ctx;
  const where = redactUrl(ctx.databaseUrl);
  ctx.print(`runledger doctor: database ${where} (from ${env.source}), schema ${env.schema}, queue backend ${env.queue.backend}`);
  const results: CheckResult[] = [];
  const pg = await checkPostgres(ctx.ledger.pool, where);
  results.push(pg);
  const dbUp = pg.status === 'ok';
  const skip = (name: string): CheckResult => ({ name, status: 'skip', detail: 'skipped: PostgreSQL is unreachable' });
  const schema = dbUp ? await checkSchema(ctx.ledger.pool, env.schema) : skip('schema');
  results.push(schema);
  if (env.queue.backend === 'redis') {
    const redis = await checkRedis(env.queue.redisUrl ?? '');
    results.push(...redis);
    if (redis[0]?.status === 'ok') results.push(await checkQueue(await ctx.queue(), `BullMQ on Redis, prefix ${env.queue.prefix}`));
  } else {
    results.push(dbUp ? await checkQueue(await ctx.queue(), `BullMQ PostgreSQL backend, schema ${env.schema}_queue`) : skip('queue'));
  }
  results.push(dbUp ? await checkWorkers(ctx.ledger.pool) : skip('workers'));
  // Its statement reads columns of the latest migrations.
  results.push(schema.status === 'ok' ? await checkServed(ctx.ledger) : { name: 'served', status: 'skip', detail: `skipped: ${schema.detail}` });

  const width = Math.max(...results.map((r) => r.name.length));
  for (const r of results) {
    const mark = r.status === 'ok' ? paint.green('✓') : r.status === 'fail' ? paint.red('✗') : paint.dim('-');
    ctx.print(`  ${mark} ${r.name.padEnd(width)}  ${r.detail}`);
    if (r.fix) ctx.print(`      ${' '.repeat(width)}${paint.yellow('fix:')} ${r.fix}`);
  }
  const failed = results.filter((r) => r.status === 'fail').length;
  ctx.print(failed === 0 ? paint.green('All checks passed.') : paint.red(`${failed} check(s) failed.`));
  return failed === 0 ? 0 : 1;
}
