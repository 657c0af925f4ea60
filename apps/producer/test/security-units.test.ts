import { randomBytes } from 'node:crypto';
import { AesGcmPayloadCodec, createRedactor, parseEncryptionKeys, REDACTED } from '@runledger/ledger';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config';
import { accessOf, KeyRing, parseApiKeys, parseSecurityEnv, TokenBuckets } from '../src/security';
import { Signer } from '../src/security/cookies';
import { loggableUrl } from '../src/security/redaction';
import { AdminSessions } from '../src/security/session';

const SECRET = 'tenant-secret-0123456789abcdef';

describe('API keys', () => {
  it('parses tenant:key pairs, keeping colons inside keys', () => {
    expect(parseApiKeys(' acme:k1:with:colons , globex:k2 ')).toEqual([
      { tenant: 'acme', key: 'k1:with:colons' },
      { tenant: 'globex', key: 'k2' },
    ]);
    expect(parseApiKeys(undefined)).toEqual([]);
  });

  it.each([
    [`${SECRET}`, 'entry 1 must be tenant:key'],
    [`acme:${SECRET},bad tenant:${SECRET}x`, 'entry 2 must be tenant:key'],
    ['acme:', 'entry 1 (tenant "acme") has an empty key'],
    [`acme:${SECRET},globex:${SECRET}`, 'reuses a key'],
  ])('refuses %j without echoing a key', (spec, message) => {
    let thrown: Error | undefined;
    try {
      parseApiKeys(spec);
    } catch (err) {
      thrown = err as Error;
    }
    expect(thrown?.message).toContain(message);
    expect(thrown?.message).not.toContain(SECRET);
  });

  it('identifies tenants and the admin, and nobody else', () => {
    const ring = new KeyRing(parseApiKeys('acme:key-a,globex:key-g'), 'key-admin');
    expect(ring.identify('key-a')).toEqual({ tenant: 'acme', admin: false, via: 'bearer' });
    expect(ring.identify('key-g')?.tenant).toBe('globex');
    expect(ring.identify('key-admin')).toMatchObject({ admin: true });
    for (const wrong of ['key-', 'key-ax', 'KEY-A', '']) expect(ring.identify(wrong)).toBeUndefined();
    expect(ring.isAdminKey('key-a')).toBe(false);
    expect(() => new KeyRing(parseApiKeys('acme:same'), 'same')).toThrow(/must differ/);
    expect(new KeyRing([], undefined).enabled).toBe(false);
  });
});

describe('route access', () => {
  it.each([
    ['/healthz', '/healthz', 'public'],
    ['/docs/static/*', '/docs/static/x.js', 'public'],
    ['/admin/login', '/admin/login', 'public'],
    ['/admin/static/:name', '/admin/static/dashboard.css', 'public'],
    [undefined, '/admin/static/nothing-here', 'admin'],
    ['/playground', '/playground', 'public'],
    ['/playground/playground.js', '/playground/playground.js', 'public'],
    [undefined, '/playground/nothing-here', 'tenant'],
    ['/admin', '/admin', 'admin'],
    ['/admin/queues/api/queues', '/admin/queues/api/queues', 'admin'],
    ['/metrics', '/metrics', 'admin'],
    ['/v1/jobs/:jobId', '/v1/jobs/x', 'tenant'],
    [undefined, '/admin/not-yet-built', 'admin'],
    [undefined, '/anything', 'tenant'],
  ] as const)('%s (%s) is %s', (route, path, access) => {
    expect(accessOf(route, path)).toBe(access);
  });
});

describe('token buckets', () => {
  it('grants the burst, then refills at the rate, and says when to retry', () => {
    let now = 0;
    const buckets = new TokenBuckets(2, 3, 10, () => now);
    expect([1, 2, 3, 4].map(() => buckets.take('a').ok)).toEqual([true, true, true, false]);
    expect(buckets.take('a')).toEqual({ ok: false, retryAfterSeconds: 1 });
    expect(buckets.take('b').ok).toBe(true);
    now += 500;
    expect(buckets.take('a').ok).toBe(true);
    expect(buckets.take('a').ok).toBe(false);
    const slow = new TokenBuckets(0.1, 1, 10, () => now);
    slow.take('x');
    expect(slow.take('x')).toEqual({ ok: false, retryAfterSeconds: 10 });
  });
});

describe('admin sessions and signed values', () => {
  it('accepts its own unexpired sessions only', () => {
    let now = 1_000_000;
    const sessions = new AdminSessions('admin-key', 60_000, undefined, () => now);
    const value = sessions.issue();
    expect(sessions.verify(value)).toBe(true);
    expect(new AdminSessions('other-admin-key', 60_000, undefined, () => now).verify(value)).toBe(false);
    expect(sessions.verify(value.replace('v1-', 'v2-'))).toBe(false);
    expect(sessions.verify(undefined)).toBe(false);
    now += 60_001;
    expect(sessions.verify(value)).toBe(false);
  });

  it('keeps every session apart, whatever its random id holds (base64url has "-")', async () => {
    const revoked = new Set<string>();
    const revocations = { revoke: async (id: string) => void revoked.add(id), isRevoked: async (id: string) => revoked.has(id) };
    const sessions = new AdminSessions('admin-key', 60_000, revocations);
    const values = Array.from({ length: 2_000 }, () => sessions.issue());
    expect(values.filter((v) => !sessions.verify(v))).toEqual([]);
    await sessions.revoke(values[0]);
    const active = await Promise.all(values.map((v) => sessions.isActive(v)));
    expect(active.filter((a) => !a)).toHaveLength(1);
    expect(active[0]).toBe(false);
  });

  it('refuses a value signed by another key or altered', () => {
    const signer = Signer.derive('k', 'purpose');
    const signed = signer.sign('payload');
    expect(signer.verify(signed)).toBe('payload');
    expect(Signer.derive('k', 'other').verify(signed)).toBeUndefined();
    expect(signer.verify(`x${signed}`)).toBeUndefined();
  });
});

describe('payload codec', () => {
  const spec = (kid: string) => `${kid}:${randomBytes(32).toString('base64')}`;
  const [A, B] = [spec('a'), spec('b')];

  it('round-trips JSON values and leaves unsealed values alone', () => {
    const codec = AesGcmPayloadCodec.fromSpec(A);
    for (const v of [{ x: [1, 'two', null] }, 'text', 0, null, true]) expect(codec.open(codec.seal(v, 'ctx'), 'ctx')).toEqual(v);
    expect(codec.open({ plain: 1 }, 'ctx')).toEqual({ plain: 1 });
    const sealed = codec.seal('v', 'ctx');
    expect(codec.seal('v', 'ctx').iv).not.toBe(sealed.iv);
  });

  it('refuses a value moved to another row or altered', () => {
    const codec = AesGcmPayloadCodec.fromSpec(A);
    const sealed = codec.seal({ secret: 1 }, 'jobs.input:1');
    expect(() => codec.open(sealed, 'jobs.input:2')).toThrow(/altered or moved/);
    const data = Buffer.from(sealed.data, 'base64');
    data[0] = (data[0] ?? 0) ^ 1;
    expect(() => codec.open({ ...sealed, data: data.toString('base64') }, 'jobs.input:1')).toThrow(/altered/);
  });

  it('seals with the first key and opens with any listed key', () => {
    const old = AesGcmPayloadCodec.fromSpec(A);
    const rotated = AesGcmPayloadCodec.fromSpec(`${B},${A}`);
    expect(rotated.currentKeyId).toBe('b');
    expect(rotated.open(old.seal('x', 'c'), 'c')).toBe('x');
    expect(() => AesGcmPayloadCodec.fromSpec(B).open(old.seal('x', 'c'), 'c')).toThrow(/key "a".*RUNLEDGER_ENCRYPTION_KEY/);
  });

  it.each([
    ['k1:c2hvcnQ=', 'must be 32 bytes'],
    [`:${randomBytes(32).toString('base64')}`, 'entry 1 must be kid:base64key'],
    [`k1:${randomBytes(32).toString('base64')},k1:${randomBytes(32).toString('base64')}`, 'appears twice'],
    ['', 'expected kid:base64key'],
  ])('refuses the key list %j without echoing key material', (value, message) => {
    expect(() => parseEncryptionKeys(value)).toThrow(message);
    try {
      parseEncryptionKeys(value);
    } catch (err) {
      const material = value.split(',')[0]?.split(':')[1];
      if (material) expect((err as Error).message).not.toContain(material);
    }
  });
});

describe('redactor', () => {
  const redactor = createRedactor([SECRET, 'short', undefined]);

  it('masks secrets, connection-string passwords and sensitive fields, keeping the rest', () => {
    expect(redactor.text(`key ${SECRET} and postgres://app:pw-1234@db:5432/x`)).toBe(`key ${REDACTED} and postgres://app:${REDACTED}@db:5432/x`);
    expect(redactor.text('a short word stays')).toBe('a short word stays');
    const out = redactor.value({ jobId: 'j1', input: { a: 1 }, nested: { Authorization: 'Bearer x', note: SECRET }, list: [SECRET] });
    expect(out).toEqual({ jobId: 'j1', input: REDACTED, nested: { Authorization: REDACTED, note: REDACTED }, list: [REDACTED] });
  });

  it('turns errors into plain objects with redacted text and leaves class instances to the logger', () => {
    const err = new Error(`failed with ${SECRET}`);
    expect(redactor.value(err)).toMatchObject({ type: 'Error', message: `failed with ${REDACTED}` });
    const instance = new (class Request {
      input = 'kept for the serializer';
    })();
    expect(redactor.value({ req: instance })).toEqual({ req: instance });
  });
});

describe('security environment', () => {
  const base = { DATABASE_URL: 'postgres://app:db-password-1@127.0.0.1/x' };

  it('runs open with the documented defaults when no key is set, and warns', () => {
    const s = parseSecurityEnv(base);
    expect(s.open).toBe(true);
    expect(s.crypto).toBeUndefined();
    expect(s.warnings[0]).toContain('AUTHENTICATION IS OFF');
    expect(s.security).toMatchObject({
      apiKeys: [],
      rateLimit: false,
      failedAuthLimit: { perSecond: 100, burst: 200 },
      metadataLimitBytes: 16_384,
      requestTimeoutMs: 30_000,
      connectionTimeoutMs: 60_000,
      adminSessionTtlMs: 8 * 3600 * 1000,
      secureCookies: false,
    });
    expect(s.security.logSecrets).toContain('db-password-1');
  });

  it('refuses to start open in production, naming the variables', () => {
    expect(() => parseSecurityEnv({ ...base, NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => parseSecurityEnv({ ...base, NODE_ENV: 'production' })).toThrow(/RUNLEDGER_API_KEYS.*RUNLEDGER_ADMIN_KEY/);
    const s = parseSecurityEnv({ ...base, NODE_ENV: 'production', RUNLEDGER_API_KEYS: `acme:${SECRET}`, RUNLEDGER_ADMIN_KEY: `${SECRET}-admin` });
    expect(s.open).toBe(false);
    expect(s.security.secureCookies).toBe(true);
  });

  it('names a bad variable without echoing its value', () => {
    for (const env of [
      { RUNLEDGER_API_KEYS: `${SECRET}` },
      { RUNLEDGER_ENCRYPTION_KEY: `k1:${SECRET}` },
      { RUNLEDGER_API_KEYS: `acme:${SECRET}`, RUNLEDGER_ADMIN_KEY: SECRET },
      { RATE_LIMIT_PER_SECOND: 'many' },
    ]) {
      const name = Object.keys(env).at(-1) as string;
      let thrown: Error | undefined;
      try {
        parseSecurityEnv({ ...base, ...env });
      } catch (err) {
        thrown = err as Error;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect(thrown?.message).toContain(name);
      expect(thrown?.message).not.toContain(SECRET);
    }
  });

  it('turns RATE_LIMIT_PER_SECOND=0 into no limit and RUNLEDGER_ENCRYPTION_KEY into a codec', () => {
    const s = parseSecurityEnv({ ...base, RATE_LIMIT_PER_SECOND: '0', RUNLEDGER_ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}` });
    expect(s.security.rateLimit).toBe(false);
    expect(s.security.failedAuthLimit).toBe(false);
    expect(parseSecurityEnv({ ...base, RATE_LIMIT_PER_SECOND: '50' }).security).toMatchObject({
      rateLimit: { perSecond: 50, burst: 100 },
      failedAuthLimit: { perSecond: 50, burst: 100 },
    });
    expect(s.crypto?.seal('x', 'c')).toMatchObject({ enc: 'v1', kid: 'k1' });
  });
});

describe('request lines in the log', () => {
  it('keep the list filters and mask every other query value and URL credentials', () => {
    expect(loggableUrl('/v1/jobs?status=running&graph=echo&limit=5&api_key=k1&apiKey=k2&token=k3&x=k4')).toBe(
      `/v1/jobs?status=running&graph=echo&limit=5&api_key=${REDACTED}&apiKey=${REDACTED}&token=${REDACTED}&x=${REDACTED}`,
    );
    expect(loggableUrl('http://u:secret-key@host:3000/v1/jobs')).toBe('http://host:3000/v1/jobs');
    expect(loggableUrl('/v1/jobs/abc')).toBe('/v1/jobs/abc');
    expect(loggableUrl('http://[broken')).toBe(REDACTED);
  });
});
