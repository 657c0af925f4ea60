// Finds the PostgreSQL and Redis the tests use. DATABASE_URL wins; otherwise a server on
// 127.0.0.1:5432; otherwise an embedded PostgreSQL started here for this run.
// Redis: REDIS_URL, or 127.0.0.1:6379; without one the Redis suites are skipped, loudly.
import type { TestProject } from 'vitest/node';
import { isPortOpen, startEmbeddedPostgres } from '../../packages/ledger/src/embedded';

import './provided';

export default async function setup(project: TestProject) {
  let stop: (() => Promise<void>) | undefined;
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    if (await isPortOpen(5432)) {
      databaseUrl = 'postgres://postgres@127.0.0.1:5432/postgres';
    } else {
      const db = await startEmbeddedPostgres({ dir: '.runledger/test-pg' });
      console.log(`[tests] no PostgreSQL configured or on :5432; started an embedded one on :${db.port}`);
      databaseUrl = db.url;
      stop = db.stop;
    }
  }
  let redisUrl = process.env.REDIS_URL ?? null;
  if (!redisUrl && (await isPortOpen(6379))) redisUrl = 'redis://127.0.0.1:6379';
  if (!redisUrl && process.env.RUNLEDGER_REQUIRE_REDIS === '1')
    throw new Error('RUNLEDGER_REQUIRE_REDIS=1 but no Redis answers (REDIS_URL unset, nothing on :6379).');
  if (!redisUrl)
    console.warn('[tests] no Redis (REDIS_URL unset, nothing on :6379): SKIPPING the Redis-backend suites; the PostgreSQL-backend suites still run.');
  project.provide('databaseUrl', databaseUrl);
  project.provide('redisUrl', redisUrl);
  return async () => {
    await stop?.();
  };
}
