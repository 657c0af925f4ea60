import http from 'node:http';
import https from 'node:https';
import type { WebhookDestinations } from './destinations';

/** What one POST came to: the receiver's status, or why there was none. */
export type SendOutcome = { statusCode: number; error: null } | { statusCode: null; error: string };

/**
 * POSTs `body` to `url` once: no redirect followed, at most `timeoutMs` for the whole exchange,
 * and only to addresses `destinations` allows (checked on the resolved address, see lookupFor).
 * The receiver's body is read and dropped. Never throws.
 */
export function postWebhook(
  destinations: WebhookDestinations,
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<SendOutcome> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return resolve({ statusCode: null, error: 'the stored webhook is not a URL' });
    }
    const refused = destinations.addressProblem(target.hostname);
    if (refused) return resolve({ statusCode: null, error: refused });
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'runledger-webhooks' },
      lookup: destinations.lookupFor(target.hostname),
      signal: AbortSignal.timeout(timeoutMs),
    });
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve({ statusCode: response.statusCode ?? 0, error: null }));
      response.on('error', (err) => resolve({ statusCode: null, error: err.message }));
    });
    request.on('error', (err) =>
      resolve({ statusCode: null, error: err.name === 'AbortError' || err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : err.message }),
    );
    request.end(body);
  });
}
