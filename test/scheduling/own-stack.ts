import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from '../../packages/ledger/src/index';
import { type TestDb, testDb, waitFor } from '../support/db';
import { type Proc, spawnProcess, spawnWorker } from '../support/stack';

/**
 * A Redis server of this test's own on `port` (never the shared one: the scheduling tests
 * FLUSHALL it), no persistence; `stop` kills it.
 */
export async function ownRedis(port: number): Promise<{ url: string; flushAll(): Promise<void>; stop(): Promise<void> }> {
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], {
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const url = `redis://127.0.0.1:${port}`;
  const connect = async () => {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    client.on('error', () => {});
    return client.connect().then(
      () => client,
      () => {
        client.disconnect();
        return undefined;
      },
    );
  };
  const admin = await waitFor(`redis-server on :${port}`, connect, 20_000, 100);
  return {
    url,
    flushAll: async () => {
      await admin.flushall();
    },
    stop: async () => {
      admin.disconnect();
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Spawns a producer process on a free port and waits for /healthz; returns it and its base URL. */
export async function startProducer(env: NodeJS.ProcessEnv, add: (p: Proc) => Proc): Promise<{ proc: Proc; url: string }> {
  const port = await freePort();
  const proc = add(spawnProcess('apps/producer/src/main.ts', { ...env, PORT: String(port), HOST: '127.0.0.1' }));
  const url = `http://127.0.0.1:${port}`;
  await waitFor('a producer to answer /healthz', async () => (await fetch(`${url}/healthz`).catch(() => undefined))?.ok, 150_000, 100);
  return { proc, url };
}

/** The fields of the answers these tests read: an admission, a batch, a created cron. */
export interface Answer {
  jobId: string;
  enqueued: boolean;
  cronId: string;
  results: Array<{ status: number; body: { jobId: string } }>;
}

/** POSTs JSON and returns the status and parsed body. */
export async function post(url: string, body: unknown): Promise<{ status: number; body: Answer }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Answer };
}

/** Spawns a worker process and waits until it says it started (its BullMQ consumer is open). */
export async function startWorker(env: NodeJS.ProcessEnv, workerId: string, add: (p: Proc) => Proc, extra: Record<string, string> = {}): Promise<Proc> {
  const proc = add(spawnWorker(env, workerId, extra));
  await waitFor(`worker ${workerId} to start`, async () => proc.output().includes('worker started'), 150_000, 100);
  return proc;
}

/** SIGKILLs every process in `procs` and waits for each to exit. */
export async function killAll(procs: Proc[]): Promise<void> {
  for (const p of procs.splice(0)) {
    p.kill('SIGKILL');
    await p.exited;
  }
}

export interface OwnStack {
  db: TestDb;
  redis: Awaited<ReturnType<typeof ownRedis>>;
  /** Keeps a process a test started, for `close`. */
  add: (p: Proc) => Proc;
  close(): Promise<void>;
}

/** A fresh test schema and a Redis of this test's own on `redisPort`; `close` kills the kept processes, stops Redis and closes the pool. */
export async function ownStack(name: string, redisPort: number): Promise<OwnStack> {
  const db = await testDb(name);
  const redis = await ownRedis(redisPort).catch(async (err) => {
    await db.close();
    throw err;
  });
  const procs: Proc[] = [];
  const add = (p: Proc) => {
    procs.push(p);
    return p;
  };
  const close = async () => {
    await killAll(procs);
    await redis.stop();
    await db.close();
  };
  return { db, redis, add, close };
}
