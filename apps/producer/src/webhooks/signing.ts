import { createHmac } from 'node:crypto';

/**
 * A tenant's webhook secret: HMAC-SHA256 of the tenant under the server's WEBHOOK_SIGNING_KEY.
 * Each tenant gets its own (GET /v1/webhooks/secret); knowing one tells nothing of another's.
 */
export function tenantSecret(signingKey: string, tenant: string): Buffer {
  return createHmac('sha256', signingKey).update(`runledger webhook secret\u0000${tenant}`).digest();
}

/** The secret as Standard Webhooks libraries take it: `whsec_` and the base64 bytes. */
export const secretText = (secret: Buffer): string => `whsec_${secret.toString('base64')}`;

/**
 * The headers of a signed delivery (the Standard Webhooks scheme): `webhook-id` (the delivery,
 * stable across retries: the receiver's idempotency key), `webhook-timestamp` (seconds; a receiver
 * refuses old ones against replay) and `webhook-signature`, `v1,` and the base64 HMAC-SHA256 of
 * `<id>.<timestamp>.<body>` under the tenant's secret.
 */
export function signedHeaders(secret: Buffer, id: string, timestampSeconds: number, body: string): Record<string, string> {
  const signature = createHmac('sha256', secret).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': `v1,${signature}` };
}
