import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WebhookDestinations } from '../src/webhooks/destinations';
import { backoffAfter } from '../src/webhooks/dispatcher';
import { signedHeaders, tenantSecret } from '../src/webhooks/signing';
import { verifySignature } from './webhook-receiver';

describe('webhook destinations (WEBHOOK_ALLOWED_HOSTS)', () => {
  const allowed = WebhookDestinations.parse('hooks.example.com, *.example.org, 10.1.2.3');
  it.each([
    ['https://hooks.example.com/x', undefined],
    ['http://a.b.example.org:8080/x', undefined],
    ['http://10.1.2.3/x', undefined],
    ['https://other.example.com/x', /not an allowed webhook destination/],
    ['https://example.org/x', /not an allowed/],
    ['ftp://hooks.example.com/x', /http:\/\/ or https:\/\//],
    ['hooks.example.com/x', /absolute/],
    ['http://10.1.2.4/x', /not an allowed/],
  ])('%s', (url, problem) => {
    const found = allowed.problem(url);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });

  it('lets a wildcard reach only public addresses', () => {
    const any = WebhookDestinations.parse('*');
    expect(any.problem('https://8.8.8.8/x')).toBeUndefined();
    for (const url of [
      'http://127.0.0.1/x',
      'http://localhost/x',
      'http://192.168.0.9/x',
      'http://[::1]/x',
      'http://[::ffff:10.0.0.1]/x',
      'http://169.254.169.254/x',
    ])
      expect(any.problem(url)).toMatch(/loopback or private/);
    expect(any.addressProblem('10.0.0.1')).toMatch(/loopback or private/);
    expect(WebhookDestinations.parse('10.0.0.1').addressProblem('10.0.0.1')).toBeUndefined();
  });

  it('is off when unset', () => {
    expect(WebhookDestinations.parse(undefined).problem('https://hooks.example.com/')).toMatch(/webhooks are off/);
  });
});

describe('webhook signing', () => {
  it('signs <id>.<timestamp>.<body> with the tenant secret, per tenant', () => {
    const secret = tenantSecret('k'.repeat(32), 'acme');
    expect(secret.equals(tenantSecret('k'.repeat(32), 'globex'))).toBe(false);
    const h = signedHeaders(secret, 'd1', 1_700_000_000, '{"a":1}');
    const expected = createHmac('sha256', secret).update('d1.1700000000.{"a":1}').digest('base64');
    expect(h).toEqual({ 'webhook-id': 'd1', 'webhook-timestamp': '1700000000', 'webhook-signature': `v1,${expected}` });
    const text = `whsec_${secret.toString('base64')}`;
    expect(verifySignature(text, 'd1', '1700000000', '{"a":1}', h['webhook-signature'] ?? '')).toBe(true);
    expect(verifySignature(text, 'd1', '1700000000', '{"a":2}', h['webhook-signature'] ?? '')).toBe(false);
  });

  it('backs off exponentially up to the cap', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 10].map((n) => backoffAfter(n, 1000, 5000, mid))).toEqual([900, 1800, 3600, 4500, 4500]);
  });
});
