import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config';

const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' };

describe('producer environment', () => {
  it('applies the documented defaults', () => {
    expect(parseConfig(base)).toEqual({
      ...base,
      QUEUE_BACKEND: 'postgres',
      PORT: 3000,
      HOST: '127.0.0.1',
      DB_SCHEMA: 'public',
      QUEUE_PREFIX: 'runledger',
      BODY_LIMIT_BYTES: 1024 * 1024,
      MAX_BACKLOG: 100_000,
      MAX_OPEN_STREAMS: 2_000,
      MAX_OPEN_STREAMS_PER_TENANT: 200,
      MAX_THREAD_STATE_BYTES: 8 * 1024 * 1024,
      HISTORY_MAX_BYTES: 4 * 1024 * 1024,
      ADMISSION_BATCH_MS: 1,
      LOG_LEVEL: 'info',
      DELIVERY_KEEP_COMPLETED_HOURS: 24,
      DELIVERY_KEEP_COMPLETED_COUNT: 10_000,
      DELIVERY_KEEP_FAILED_DAYS: 7,
      CRON_TICK_MS: 1000,
      CRON_MAX_PER_TENANT: 100,
      CRON_MIN_INTERVAL_MS: 60_000,
      CRON_MISFIRE_GRACE_MS: 5000,
      WEBHOOK_TICK_MS: 1000,
      WEBHOOK_TIMEOUT_MS: 10_000,
      WEBHOOK_RETRY_FOR_MS: 86_400_000,
      WEBHOOK_BACKOFF_MS: 1000,
      WEBHOOK_BACKOFF_MAX_MS: 600_000,
      RUNLEDGER_TEST_HOOKS: false,
      RUNLEDGER_DEV: false,
    });
  });

  it('reads how long finished deliveries are kept, and names a bad value', () => {
    const kept = parseConfig({ ...base, DELIVERY_KEEP_COMPLETED_HOURS: '1.5', DELIVERY_KEEP_COMPLETED_COUNT: '50', DELIVERY_KEEP_FAILED_DAYS: '30' });
    expect(kept).toMatchObject({ DELIVERY_KEEP_COMPLETED_HOURS: 1.5, DELIVERY_KEEP_COMPLETED_COUNT: 50, DELIVERY_KEEP_FAILED_DAYS: 30 });
    expect(() => parseConfig({ ...base, DELIVERY_KEEP_FAILED_DAYS: '-1' })).toThrow(/DELIVERY_KEEP_FAILED_DAYS/);
  });

  it('turns the test hooks on only when RUNLEDGER_TEST_HOOKS asks, and names a bad value', () => {
    expect(parseConfig({ ...base, RUNLEDGER_TEST_HOOKS: '1' }).RUNLEDGER_TEST_HOOKS).toBe(true);
    expect(parseConfig({ ...base, RUNLEDGER_TEST_HOOKS: '0' }).RUNLEDGER_TEST_HOOKS).toBe(false);
    expect(() => parseConfig({ ...base, RUNLEDGER_TEST_HOOKS: 'yes' })).toThrow(/RUNLEDGER_TEST_HOOKS/);
  });

  it('requires a signing key with webhook destinations, and names a short one', () => {
    expect(() => parseConfig({ ...base, WEBHOOK_ALLOWED_HOSTS: 'hooks.example.com' })).toThrow(/WEBHOOK_SIGNING_KEY: required/);
    expect(() => parseConfig({ ...base, WEBHOOK_SIGNING_KEY: 'short' })).toThrow(/WEBHOOK_SIGNING_KEY: must be at least 32/);
    const on = parseConfig({ ...base, WEBHOOK_ALLOWED_HOSTS: 'hooks.example.com', WEBHOOK_SIGNING_KEY: 'k'.repeat(32) });
    expect(on).toMatchObject({ WEBHOOK_ALLOWED_HOSTS: 'hooks.example.com', WEBHOOK_SIGNING_KEY: 'k'.repeat(32) });
  });

  it('takes RUNLEDGER_PG_POOLER=transaction only, and behind it the PostgreSQL queue needs RUNLEDGER_PG_DIRECT_URL', () => {
    const redis = { ...base, REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(parseConfig({ ...redis, RUNLEDGER_PG_POOLER: 'transaction' }).RUNLEDGER_PG_POOLER).toBe('transaction');
    expect(() => parseConfig({ ...redis, RUNLEDGER_PG_POOLER: 'session' })).toThrow(/RUNLEDGER_PG_POOLER: must be "transaction"/);
    expect(() => parseConfig({ ...base, RUNLEDGER_PG_POOLER: 'transaction' })).toThrow(/RUNLEDGER_PG_DIRECT_URL: required when QUEUE_BACKEND=postgres/);
    const direct = 'postgres://postgres@127.0.0.1:5432/postgres';
    expect(parseConfig({ ...base, RUNLEDGER_PG_POOLER: 'transaction', RUNLEDGER_PG_DIRECT_URL: direct }).RUNLEDGER_PG_DIRECT_URL).toBe(direct);
  });

  it('picks the Redis backend when REDIS_URL is set, unless QUEUE_BACKEND says otherwise', () => {
    expect(parseConfig({ ...base, REDIS_URL: 'redis://127.0.0.1:6379' }).QUEUE_BACKEND).toBe('redis');
    expect(parseConfig({ ...base, REDIS_URL: 'redis://127.0.0.1:6379', QUEUE_BACKEND: 'postgres' }).QUEUE_BACKEND).toBe('postgres');
  });

  it('treats an empty variable as unset and keeps the API key variables', () => {
    const c = parseConfig({ ...base, REDIS_URL: '', PORT: '', RUNLEDGER_API_KEYS: 'acme:k1', RUNLEDGER_ADMIN_KEY: 'a' });
    expect(c).toMatchObject({ QUEUE_BACKEND: 'postgres', PORT: 3000, RUNLEDGER_API_KEYS: 'acme:k1', RUNLEDGER_ADMIN_KEY: 'a' });
  });

  it.each([
    [{}, 'DATABASE_URL: required'],
    [{ DATABASE_URL: 'mysql://x/y' }, 'DATABASE_URL: must be a URL'],
    [{ ...base, PORT: 'eighty' }, 'PORT: must be an integer'],
    [{ ...base, PORT: '70000' }, 'PORT: must be an integer'],
    [{ ...base, QUEUE_BACKEND: 'kafka' }, 'QUEUE_BACKEND:'],
    [{ ...base, QUEUE_BACKEND: 'redis' }, 'REDIS_URL: required when QUEUE_BACKEND=redis'],
    [{ ...base, REDIS_URL: 'localhost:6379' }, 'REDIS_URL: must be a URL'],
    [{ ...base, DB_SCHEMA: 'Robert; DROP' }, 'DB_SCHEMA:'],
    [{ ...base, BODY_LIMIT_BYTES: '12' }, 'BODY_LIMIT_BYTES:'],
    [{ ...base, ADMISSION_BATCH_MS: '-1' }, 'ADMISSION_BATCH_MS:'],
  ])('fails fast naming the bad variable (%j)', (env, message) => {
    expect(() => parseConfig(env)).toThrow(ConfigError);
    expect(() => parseConfig(env)).toThrow(message);
  });
});
