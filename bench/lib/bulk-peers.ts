// The durable peers of bulk admission, each admitting a batch the way its library's own bulk call
// does, called in the bench process like the `addBulk` baseline (no HTTP in front):
//   insert-addBulk   one multi-row INSERT of jobs-sized rows (bench-schema.ts's plain_rows),
//                    committed, then one BullMQ addBulk: durable bulk admission written by hand
//   pg-boss          pg-boss `insert` (its own schema `<schema>_pgboss`), no Redis
//   graphile-worker  graphile-worker `addJobs` (its own schema `<schema>_graphile`), no Redis
// Their PostgreSQL connections carry application_name `bulk-peers`, so the CPU split can name them.
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import pg from 'pg';
import type { DeliveryData } from '../../packages/queue/src/index';

export const PEERS_APP = 'bulk-peers';
const POOL_MAX = 20;

export interface BulkPeers {
  /** Peer name → admits one batch of `batch` jobs. */
  ops: Record<string, () => Promise<unknown>>;
  close(): Promise<void>;
}

export async function openBulkPeers(databaseUrl: string, schema: string, queue: Queue<DeliveryData>, batch: number): Promise<BulkPeers> {
  const closers: Array<() => Promise<unknown>> = [];
  const closeAll = async () => {
    for (const c of [...closers].reverse()) await c().catch(() => {});
  };
  const named = (options: pg.PoolConfig = {}) => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_MAX, application_name: PEERS_APP, ...options });
    const report = (err: Error) => console.error(`[bench] bulk peers' pool: ${err.message}`);
    pool.on('error', report);
    pool.on('connect', (client) => client.on('error', report));
    closers.push(() => pool.end());
    return pool;
  };
  try {
    const pool = named({ options: `-c search_path=${schema}` });
    const input = JSON.stringify({ steps: 2 });
    const insertAddBulk = async () => {
      const ids = Array.from({ length: batch }, () => randomUUID());
      await pool.query(
        `INSERT INTO plain_rows (id, tenant, request_hash, graph, thread_id, input, metadata, status)
         SELECT id, 'default', id, 'echo', id, $2::jsonb, '{}', 'accepted' FROM unnest($1::text[]) AS id`,
        [ids, input],
      );
      return queue.addBulk(ids.map((jobId) => ({ name: 'run', data: { jobId }, opts: { jobId } })));
    };
    const { default: PgBoss } = await import('pg-boss');
    const boss = new PgBoss({
      connectionString: databaseUrl,
      schema: `${schema}_pgboss`,
      max: POOL_MAX,
      supervise: false,
      schedule: false,
      application_name: PEERS_APP,
    });
    boss.on('error', (err) => console.error(`pg-boss: ${err.message}`));
    await boss.start();
    await boss.createQueue('run');
    closers.push(() => boss.stop({ graceful: false, wait: true }));
    const { makeWorkerUtils } = await import('graphile-worker');
    const utils = await makeWorkerUtils({ pgPool: named(), schema: `${schema}_graphile` });
    await utils.migrate();
    closers.push(async () => utils.release());
    const jobs = () => Array.from({ length: batch }, () => ({ jobId: randomUUID(), input: { steps: 2 } }));
    return {
      ops: {
        'insert-addBulk': insertAddBulk,
        'pg-boss insert': () => boss.insert(jobs().map((data) => ({ name: 'run', data, id: data.jobId }))),
        'graphile-worker addJobs': () => utils.addJobs(jobs().map((payload) => ({ identifier: 'run', payload }))),
      },
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
