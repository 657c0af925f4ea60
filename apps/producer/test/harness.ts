import { randomBytes } from 'node:crypto';
import { createPool, Ledger } from '@runledger/ledger';
import { type DeliveryData, openQueue } from '@runledger/queue';
import { loadGraphs } from '@runledger/runtime';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { inject } from 'vitest';
import '../../../test/support/provided';
import { type TestDb, testDb } from '../../../test/support/db';
import { buildApp } from '../src/app';

/** A PostgreSQL and a Redis URL where nothing listens: real refused connections, no mocks. */
export const CLOSED_PG_URL = 'postgres://postgres@127.0.0.1:1/postgres';
export const CLOSED_REDIS_URL = 'redis://127.0.0.1:1';

export type Backend = 'redis' | 'postgres';

/** The backends these tests can run on: PostgreSQL always, Redis when the global setup found one. */
export function backends(): Backend[] {
  return inject('redisUrl') ? ['redis', 'postgres'] : ['postgres'];
}

/** Every backend, each with one transaction per admission and with group commit. */
export function admissionModes(): Array<{ backend: Backend; groupCommit: boolean; name: string }> {
  return backends().flatMap((backend) => [
    { backend, groupCommit: false, name: `${backend} queue` },
    { backend, groupCommit: true, name: `${backend} queue, group commit` },
  ]);
}

export interface Harness {
  app: FastifyInstance;
  /** The test schema's ledger on a working pool, for assertions and for driving jobs. */
  db: TestDb;
  /** The ledger the app uses (differs from db.ledger when the app's database is down). */
  appLedger: Ledger;
  queue: Queue<DeliveryData>;
  /** The queue's prefix, for a worker process on the same queue. */
  queuePrefix: string;
  backend: Backend;
  close(): Promise<void>;
}

export interface HarnessOptions {
  backend?: Backend;
  /** Point the app's queue at this Redis (e.g. CLOSED_REDIS_URL). */
  redisUrl?: string;
  /** Point the app's ledger pool at this PostgreSQL (e.g. CLOSED_PG_URL). */
  appDatabaseUrl?: string;
  bodyLimitBytes?: number;
  /** Admissions share transactions within a 1 ms window (buildApp's groupCommit). */
  groupCommit?: boolean;
  db?: TestDb;
}

/** A migrated schema, a queue with a prefix of its own, and the app built in-process on them. */
export async function startHarness(name: string, options: HarnessOptions = {}): Promise<Harness> {
  const backend = options.backend ?? 'postgres';
  const db = options.db ?? (await testDb(name));
  const appPool = options.appDatabaseUrl ? createPool({ connectionString: options.appDatabaseUrl, schema: db.schema, max: 4 }) : undefined;
  const appLedger = appPool ? new Ledger(appPool) : db.ledger;
  const queuePrefix = `{t_${name}_${randomBytes(3).toString('hex')}}`;
  const queue = openQueue({
    backend,
    redisUrl: options.redisUrl ?? inject('redisUrl') ?? undefined,
    databaseUrl: db.url,
    schema: db.schema,
    prefix: queuePrefix,
  });
  const app = buildApp({
    ledger: appLedger,
    queue,
    graphs: await loadGraphs(),
    schema: db.schema,
    bodyLimitBytes: options.bodyLimitBytes,
    groupCommit: options.groupCommit ? { windowMs: 1 } : false,
  });
  await app.ready();
  // As the producer's listen() does: BullMQ's PostgreSQL tables exist before the first admission.
  if (backend === 'postgres') await queue.waitUntilReady();
  return {
    app,
    db,
    appLedger,
    queue,
    queuePrefix,
    backend,
    async close() {
      await app.close();
      await queue.close().catch(() => {});
      await appPool?.end();
      if (!options.db) await db.close();
    },
  };
}

/** Every job of the schema, newest first (the whole ledger, for "nothing was written" checks). */
export async function allJobs(db: TestDb) {
  return (await db.ledger.list({ limit: 500 })).jobs;
}
