// The HTTP admission baselines: one Fastify endpoint, POST /v1/jobs answering 202, with what a
// hand-built service would do behind it instead of Runledger (PEER):
//   queue           only adds a queue message (the options a Runledger delivery uses); no database
//   insert-add      one INSERT of a jobs-sized row (bench-schema.ts's plain_rows), committed, then
//                   the same queue add: durable admission written by hand, no group commit
//   pg-boss         pg-boss `send` (its own schema `<DB_SCHEMA>_pgboss`), no Redis
//   graphile-worker graphile-worker `addJob` (its own schema `<DB_SCHEMA>_graphile`), no Redis
// Each peer's library is loaded only when chosen. No validation, no logging. The database peers get the producer's pool size (20).
// `queue` and `insert-add` also answer POST /v1/jobs/batch ({ jobs: [{ input }…] }) with one `addBulk`
// (insert-add: after one multi-row INSERT), one result per job as the producer answers it.
// Env: PORT, PEER, REDIS_URL, QUEUE_PREFIX, DATABASE_URL, DB_SCHEMA. Prints "listening" when ready.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { createPool } from '../../packages/ledger/src/index';
import { openQueue } from '../../packages/queue/src/index';
import { BASELINE_INSERT, BASELINE_INSERT_MANY } from '../bench-schema';

const POOL_MAX = 20;
const peer = process.env.PEER ?? 'queue';
const schema = process.env.DB_SCHEMA ?? 'public';
const connectionString = process.env.DATABASE_URL ?? '';
const closers: Array<() => Promise<unknown>> = [];

type Admit = (jobId: string, input: unknown) => Promise<unknown>;
type AdmitMany = (jobs: Array<{ jobId: string; input: unknown }>) => Promise<unknown>;

/** This peer's options for every add: one attempt, a finished delivery removed at once (lighter than Runledger's retention). */
const deliveryOpts = (jobId: string) => ({ removeOnComplete: true, removeOnFail: 1000, attempts: 1, jobId });

async function admitter(): Promise<{ one: Admit; many?: AdmitMany }> {
  const openBull = () => {
    const queue = openQueue({ backend: 'redis', redisUrl: process.env.REDIS_URL, prefix: process.env.QUEUE_PREFIX });
    closers.push(() => queue.close());
    return {
      add: (jobId: string) => queue.add('run', { jobId }, deliveryOpts(jobId)),
      addBulk: (ids: string[]) => queue.addBulk(ids.map((jobId) => ({ name: 'run', data: { jobId }, opts: deliveryOpts(jobId) }))),
    };
  };
  if (peer === 'queue') {
    const { add, addBulk } = openBull();
    return { one: add, many: (jobs) => addBulk(jobs.map((j) => j.jobId)) };
  }
  if (peer === 'insert-add') {
    const pool = createPool({ connectionString, schema, max: POOL_MAX });
    closers.push(() => pool.end());
    const { add, addBulk } = openBull();
    const hash = randomUUID();
    const one: Admit = async (jobId, input) => {
      await pool.query(BASELINE_INSERT, [jobId, hash, JSON.stringify(input)]);
      return add(jobId);
    };
    const many: AdmitMany = async (jobs) => {
      await pool.query(BASELINE_INSERT_MANY, [jobs.map((j) => j.jobId), hash, jobs.map((j) => JSON.stringify(j.input))]);
      return addBulk(jobs.map((j) => j.jobId));
    };
    return { one, many };
  }
  if (peer === 'pg-boss') {
    // Its own application_name would hide its backends from the bench's CPU split: keep PGAPPNAME.
    const { default: PgBoss } = await import('pg-boss');
    const boss = new PgBoss({
      connectionString,
      schema: `${schema}_pgboss`,
      max: POOL_MAX,
      supervise: false,
      schedule: false,
      application_name: process.env.PGAPPNAME,
    });
    boss.on('error', (err) => console.error(`pg-boss: ${err.message}`));
    await boss.start();
    await boss.createQueue('run');
    closers.push(() => boss.stop({ graceful: false, wait: true }));
    return { one: (jobId, input) => boss.send('run', { jobId, input }, { id: jobId }) };
  }
  if (peer === 'graphile-worker') {
    const { makeWorkerUtils } = await import('graphile-worker');
    const utils = await makeWorkerUtils({ connectionString, schema: `${schema}_graphile`, maxPoolSize: POOL_MAX });
    await utils.migrate();
    closers.push(async () => utils.release());
    return { one: (jobId, input) => utils.addJob('run', { jobId, input }) };
  }
  throw new Error(`unknown PEER ${peer}`);
}

const admit = await admitter();
const app = Fastify({ logger: false });

app.post('/v1/jobs', async (request, reply) => {
  const jobId = randomUUID();
  await admit.one(jobId, (request.body as { input?: unknown } | undefined)?.input ?? null);
  return reply.code(202).send({ jobId, status: 'accepted', enqueued: true });
});

const many = admit.many;
if (many) {
  app.post('/v1/jobs/batch', async (request) => {
    const jobs = ((request.body as { jobs?: Array<{ input?: unknown }> }).jobs ?? []).map((j) => ({ jobId: randomUUID(), input: j.input ?? null }));
    await many(jobs);
    return { results: jobs.map(({ jobId }) => ({ status: 202, body: { jobId, status: 'accepted', enqueued: true } })) };
  });
}

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('listening');
const close = async () => {
  await app.close();
  for (const c of closers) await c().catch(() => {});
  process.exit(0);
};
process.once('SIGTERM', () => void close());
