import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got, with whether its signature checked out against the tenant's secret. */
export interface ReceivedPost {
  id: string;
  timestamp: number;
  signed: boolean;
  body: Record<string, unknown>;
  /** True when this POST was the first accepted one of its webhook-id (a repeat is answered 200 and dropped). */
  accepted: boolean;
}

/** Verifies a Standard Webhooks signature, as SECURITY.md shows a receiver doing it. */
export function verifySignature(secret: string, id: string, timestamp: string, body: string, header: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return header.split(' ').some((part) => {
    const [version, sig] = part.split(',');
    const given = Buffer.from(sig ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/**
 * A webhook receiver on 127.0.0.1 that dedups by webhook-id (the idempotency key), as a real
 * receiver should. `hold` (when set) is awaited before a first delivery is answered: a test kills
 * the sender in that window.
 */
export class WebhookReceiver {
  readonly posts: ReceivedPost[] = [];
  secret = '';
  hold: ((post: ReceivedPost) => Promise<void>) | undefined;
  private server: http.Server | undefined;

  async listen(port = 0): Promise<string> {
    const server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => {
        raw += d;
      });
      req.on('end', async () => {
        const id = String(req.headers['webhook-id'] ?? '');
        const ts = String(req.headers['webhook-timestamp'] ?? '');
        const signed = verifySignature(this.secret, id, ts, raw, String(req.headers['webhook-signature'] ?? ''));
        const seen = this.posts.some((p) => p.id === id && p.accepted);
        const post = { id, timestamp: Number(ts), signed, body: JSON.parse(raw) as Record<string, unknown>, accepted: signed && !seen };
        this.posts.push(post);
        if (post.accepted && this.hold) await this.hold(post);
        res.writeHead(signed ? 200 : 401).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Accepted deliveries (one per webhook-id) of a run. */
  accepted(runId: string): ReceivedPost[] {
    return this.posts.filter((p) => p.accepted && p.body.run_id === runId);
  }

  of(runId: string): ReceivedPost[] {
    return this.posts.filter((p) => p.body.run_id === runId);
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
