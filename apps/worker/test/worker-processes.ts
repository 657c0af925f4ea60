// Real worker processes on a Redis queue for one test file: a fresh test schema, its queue
// settings, and the processes the tests start with the environment given here. `cleanup` (after
// each test) prints their output when the test failed and SIGKILLs them; `close` closes the pool.
import { inject } from 'vitest';
import { listWorkers } from '../../../packages/ledger/src/index';
import { deliver, openQueue, type QueueConfig } from '../../../packages/queue/src/index';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { type Proc, processRegistry, queueConfigFor, spawnWorker, stackEnv } from '../../../test/support/stack';
import '../../../test/support/provided';

export interface WorkerProcesses {
  db: TestDb;
  q: QueueConfig;
  /** Spawns worker `id` (with `extra` in its environment); resolves once it has announced itself. */
  start(id: string, extra?: Record<string, string>): Promise<Proc>;
  /** How many `claimed` events the job has. */
  claims(jobId: string): Promise<number>;
  /** Delivers the job (after a resume or an upgrade) through a queue opened for this call. */
  deliver(job: Parameters<typeof deliver>[2]): Promise<void>;
  cleanup: ReturnType<typeof processRegistry>['cleanup'];
  close(): Promise<void>;
}

export async function startWorkerProcesses(name: string, env: Record<string, string>): Promise<WorkerProcesses> {
  const db = await testDb(name);
  let q: QueueConfig;
  try {
    q = queueConfigFor('redis', db.url, db.schema, inject('redisUrl'));
  } catch (err) {
    await db.close(); // no Redis: the pool is not left open
    throw err;
  }
  const processEnv = stackEnv(q, db.url, db.schema, env);
  const procs = processRegistry();
  return {
    db,
    q,
    async start(id, extra = {}) {
      const p = procs.add(spawnWorker(processEnv, id, extra));
      await waitFor(
        `worker ${id} to announce itself`,
        async () => (await listWorkers(db.ledger.pool)).find((w) => w.workerId === id && w.seenMsAgo < 2_000),
        90_000,
        200,
      );
      return p;
    },
    claims: async (jobId) => (await db.ledger.events(jobId)).filter((e) => e.type === 'claimed').length,
    async deliver(job) {
      const queue = openQueue(q);
      try {
        await deliver(queue, db.ledger, job);
      } finally {
        await queue.close();
      }
    },
    cleanup: (ctx) => procs.cleanup(ctx),
    close: () => db.close(),
  };
}
