import { randomBytes } from 'node:crypto';
import { Ledger, type PayloadCodec } from '@runledger/ledger';
import { type DeliveryData, openQueue, type QueueConfig } from '@runledger/queue';
import { loadGraphs } from '@runledger/runtime';
import type { Queue } from 'bullmq';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { inject } from 'vitest';
import '../../../test/support/provided';
import { type TestDb, testDb } from '../../../test/support/db';
import { buildApp } from '../src/app';
import type { SecurityOptions } from '../src/security';

/** Distinctive keys: two tenants and the operator. */
export const KEYS = {
  acme: 'acme-key-3f9c2e71b04d4a8e9d1c',
  globex: 'globex-key-8a1d6b0c5e2f4937a6b4',
  admin: 'admin-key-c47e19d2f85a4b03b6e1',
};

/** Both tenants and the admin key, as RUNLEDGER_API_KEYS and RUNLEDGER_ADMIN_KEY would give them. */
export const TWO_TENANTS: SecurityOptions = {
  apiKeys: [
    { tenant: 'acme', key: KEYS.acme },
    { tenant: 'globex', key: KEYS.globex },
  ],
  adminKey: KEYS.admin,
};

export interface SecuredHarness {
  app: FastifyInstance;
  db: TestDb;
  /** The ledger the app uses (with `crypto` when given). */
  ledger: Ledger;
  queue: Queue<DeliveryData>;
  /** Where the queue is (to point a worker process at it). */
  queueConfig: QueueConfig;
  /** `app.inject` with `Authorization: Bearer <key>` (none when key is undefined). */
  as(key: string | undefined, request: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface SecuredHarnessOptions {
  security?: SecurityOptions;
  crypto?: PayloadCodec;
  backend?: 'redis' | 'postgres';
  bodyLimitBytes?: number;
  /** Extra routes registered before the app is ready (a stand-in dashboard). */
  extraRoutes?: (app: FastifyInstance) => void;
}

/** A migrated schema, a queue of its own and the producer app with `security`. */
export async function startSecuredApp(name: string, options: SecuredHarnessOptions = {}): Promise<SecuredHarness> {
  const db = await testDb(name);
  const ledger = options.crypto ? new Ledger(db.ledger.pool, { crypto: options.crypto }) : db.ledger;
  const queueConfig: QueueConfig = {
    backend: options.backend ?? 'postgres',
    redisUrl: inject('redisUrl') ?? undefined,
    databaseUrl: db.url,
    schema: db.schema,
    prefix: `{t_${name}_${randomBytes(3).toString('hex')}}`,
  };
  const queue = openQueue(queueConfig);
  const app = buildApp({
    ledger,
    queue,
    graphs: await loadGraphs(),
    schema: db.schema,
    bodyLimitBytes: options.bodyLimitBytes,
    security: options.security,
  });
  options.extraRoutes?.(app);
  await app.ready();
  return {
    app,
    db,
    ledger,
    queue,
    queueConfig,
    as: (key, request) => app.inject({ ...request, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...request.headers } }),
    async close() {
      await app.close();
      await queue.close().catch(() => {});
      await db.close();
    },
  };
}

/** The `name=value` pairs of a response's Set-Cookie headers, and each header in full. */
export function setCookies(response: LightMyRequestResponse): Array<{ name: string; value: string; header: string }> {
  const raw = response.headers['set-cookie'];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return list.map((header) => {
    const [pair = ''] = header.split(';');
    const eq = pair.indexOf('=');
    return { name: pair.slice(0, eq), value: decodeURIComponent(pair.slice(eq + 1)), header };
  });
}

/** The value of the hidden `_csrf` field of an HTML page. */
export function csrfFieldValue(html: string): string | undefined {
  return /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
}
