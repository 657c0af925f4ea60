// `runledger doctor` against a redis-server of its own: an evicting maxmemory-policy (allkeys-lru)
// may drop deliveries under memory pressure, so doctor fails that check with a fix; noeviction passes it.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, isPortOpen } from '@runledger/ledger';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { cliEnv, runCli } from './cli-process';

describe('runledger doctor and the Redis eviction policy', { timeout: 120_000 }, () => {
  let db: TestDb;
  let redis: ChildProcess;
  let url: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    db = await testDb('doctor_eviction');
    const port = await freePort();
    url = `redis://127.0.0.1:${port}`;
    // Persistence on (AOF in a scratch directory), so the eviction line is the only Redis finding.
    const dir = mkdtempSync(path.join(tmpdir(), 'doctor-redis-'));
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--maxmemory-policy', 'allkeys-lru'];
    redis = spawn('redis-server', args, { stdio: 'ignore' });
    await waitFor('redis-server to listen', () => isPortOpen(port), 10_000);
    env = cliEnv({ DATABASE_URL: db.url, DB_SCHEMA: db.schema, QUEUE_BACKEND: 'redis', REDIS_URL: url, QUEUE_PREFIX: 'tdoctorevict' });
  });
  afterAll(async () => {
    redis?.kill('SIGKILL');
    await db?.close();
  });

  it('warns about allkeys-lru with a fix, and passes once the policy is noeviction', async () => {
    const lru = await runCli(['doctor'], env);
    expect(lru.stdout).toMatch(/✗ Redis eviction\s+maxmemory-policy is allkeys-lru: Redis may drop queue keys under memory pressure/);
    expect(lru.stdout).toContain('fix: set `maxmemory-policy noeviction` in redis.conf');
    expect(lru.stdout).toMatch(/✓ Redis persistence\s+AOF on/);
    expect(lru.code).toBe(1);

    const admin = new Redis(url);
    try {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
    } finally {
      admin.disconnect();
    }
    const kept = await runCli(['doctor'], env);
    expect(kept.stdout).toMatch(/✓ Redis eviction\s+maxmemory-policy noeviction/);
    expect(kept.stdout).not.toContain('may drop queue keys');
    expect(kept.stdout).toMatch(/✓ queue\s+BullMQ on Redis, prefix tdoctorevict/);
  });
});
