import type { AddressInfo } from 'node:net';
import { Client } from '@langchain/langgraph-sdk';
import { type DeliveryData, openQueue } from '@runledger/queue';
import { loadGraphs } from '@runledger/runtime';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { Client as ClientV2 } from 'langgraph-sdk-v2';
import { inject } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { type Proc, processRegistry, queueConfigFor, spawnWorker, stackEnv } from '../../../test/support/stack';
import '../../../test/support/provided';
import { buildApp } from '../src/app';

/** The SDK versions the tests drive the API with: the current latest 1.x and 2.0.0. */
export const SDKS = ['1.15.0', '2.0.0'] as const;
export type SdkVersion = (typeof SDKS)[number];

/** The HTTP status of a refused SDK call (undefined when it succeeded). */
export async function statusOf(call: Promise<unknown>): Promise<number | undefined> {
  try {
    await call;
    return undefined;
  } catch (err) {
    return (err as { status?: number }).status;
  }
}

export const KEYS = { acme: 'acme-key-0123456789abcdef01', globex: 'globex-key-0123456789abcdef0' };

/** A listening producer with tenant keys, a real queue, and real worker processes on one test schema. */
export interface LangGraphStack {
  db: TestDb;
  app: FastifyInstance;
  queue: Queue<DeliveryData>;
  url: string;
  env: NodeJS.ProcessEnv;
  procs: ReturnType<typeof processRegistry>;
  /** The official SDK client (1.15.0 unless named) of a tenant (its key sent as x-api-key), with no retries of failed requests. */
  client(key?: string, sdk?: SdkVersion): Client;
  worker(id: string, extra?: Record<string, string>): Proc;
  /** Another listening producer on the same database and queue (acme and globex keys unless `security` is given), closed with the stack. */
  producer(app?: Partial<Parameters<typeof buildApp>[0]>): Promise<{ app: FastifyInstance; url: string; client(key?: string): Client }>;
  /** Kills the workers (printing their output when `failed`), closes the app, the queue and the pool. */
  close(failed?: boolean): Promise<void>;
}

/** `app`: more options for the producer app (e.g. cors, graphs: then start the workers with the same). */
export async function startLangGraphStack(name: string, app: Partial<Parameters<typeof buildApp>[0]> = {}): Promise<LangGraphStack> {
  const db = await testDb(name);
  const backend = inject('redisUrl') ? 'redis' : 'postgres';
  const q = queueConfigFor(backend, db.url, db.schema, inject('redisUrl'));
  const queue = openQueue(q);
  const security = {
    apiKeys: [
      { tenant: 'acme', key: KEYS.acme },
      { tenant: 'globex', key: KEYS.globex },
    ],
  };
  const graphs = await loadGraphs();
  const listening = async (options: Partial<Parameters<typeof buildApp>[0]>) => {
    const built = buildApp({ graphs, security, ...options, ledger: db.ledger, queue, schema: db.schema });
    await built.listen({ port: 0, host: '127.0.0.1' });
    return { app: built, url: `http://127.0.0.1:${(built.server.address() as AddressInfo).port}` };
  };
  const { app: producer, url } = await listening(app);
  const others: FastifyInstance[] = [];
  const env = stackEnv(q, db.url, db.schema, { LEASE_TTL_MS: '1500', SWEEP_INTERVAL_MS: '250', WORKER_CONCURRENCY: '4' });
  const procs = processRegistry();
  return {
    db,
    app: producer,
    queue,
    url,
    env,
    procs,
    client: (key = KEYS.acme, sdk = '1.15.0') => {
      const options = { apiUrl: url, apiKey: key, callerOptions: { maxRetries: 0 } };
      // 2.0.0 keeps the calls these tests make; typed as 1.x so one test body drives both.
      return sdk === '2.0.0' ? (new ClientV2(options) as unknown as Client) : new Client(options);
    },
    worker: (id, extra = {}) => procs.add(spawnWorker(env, id, extra)),
    async producer(options = {}) {
      const other = await listening(options);
      others.push(other.app);
      return { ...other, client: (key = KEYS.acme) => new Client({ apiUrl: other.url, apiKey: key, callerOptions: { maxRetries: 0 } }) };
    },
    async close(failed = false) {
      await procs.cleanup({ task: { result: { state: failed ? 'fail' : 'pass' } } });
      await Promise.all(others.map((o) => o.close()));
      await producer.close();
      await queue.close();
      await db.close();
    },
  };
}
