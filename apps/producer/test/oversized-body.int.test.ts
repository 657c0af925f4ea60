import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRAIN_LIMIT_BYTES } from '../src/oversized-body';
import { allJobs, type Harness, startHarness } from './harness';

// A body over BODY_LIMIT_BYTES answers 413 payload_too_large, and the client reads that answer:
// the server drains a bounded amount of the body it refuses (or, with Expect: 100-continue,
// answers before the body is sent) instead of closing the socket while the client still writes,
// which ended a 2.5 MiB POST from Node's http client in EPIPE.

const MiB = 1024 * 1024;
let h: Harness;
let port: number;
beforeAll(async () => {
  h = await startHarness('oversized_body'); // the default limit, 1 MiB
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  port = (h.app.server.address() as { port: number }).port;
});
afterAll(() => h?.close());

/** A JSON submission of about `bytes` bytes. */
const bodyOf = (bytes: number) => JSON.stringify({ graph: 'echo', input: {}, metadata: { blob: 'x'.repeat(bytes) } });

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Whether the server asked for the body (100 Continue). */
  continued: boolean;
}

/**
 * POSTs `body` with Node's http client in 64 KiB writes, 2 ms apart (as over a real network: on
 * loopback the kernel's buffers swallow a few MiB at once, which hid the reset); with
 * `expectContinue`, only after a 100 Continue.
 */
function nodePost(body: string, options: { expectContinue?: boolean; chunked?: boolean } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (!options.chunked) headers['content-length'] = Buffer.byteLength(body);
    if (options.expectContinue) headers.expect = '100-continue';
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/jobs', headers });
    let continued = false;
    const send = async () => {
      const bytes = Buffer.from(body);
      for (let at = 0; at < bytes.length && !req.destroyed; at += 64 * 1024) {
        req.write(bytes.subarray(at, at + 64 * 1024));
        await sleep(2);
      }
      req.end();
    };
    req.on('continue', () => {
      continued = true;
      void send();
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, continued }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(20_000, () => req.destroy(new Error('no answer within 20 s')));
    if (!options.expectContinue) void send();
  });
}

function expectTooLarge(answer: { status: number; body: string }): void {
  expect(answer.status).toBe(413);
  expect(JSON.parse(answer.body)).toEqual({ error: { code: 'payload_too_large', message: expect.stringContaining('BODY_LIMIT_BYTES') } });
}

describe('a body over BODY_LIMIT_BYTES', () => {
  it('answers 413 to a 2.5 MiB POST from Node’s http client (Content-Length), and writes nothing', async () => {
    const before = await allJobs(h.db);
    const answer = await nodePost(bodyOf(2.5 * MiB));
    expectTooLarge(answer);
    expect(await allJobs(h.db)).toEqual(before);
  });

  it('answers 413 to a chunked 2.5 MiB POST (no Content-Length), found while reading', async () => {
    expectTooLarge(await nodePost(bodyOf(2.5 * MiB), { chunked: true }));
  });

  it('answers 413 to fetch', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bodyOf(2.5 * MiB),
    });
    expectTooLarge({ status: res.status, body: await res.text() });
  });

  it('answers 413 before the body is sent when the client asks with Expect: 100-continue', async () => {
    const answer = await nodePost(bodyOf(2.5 * MiB), { expectContinue: true });
    expectTooLarge(answer);
    expect(answer.continued).toBe(false);
  });

  it('still asks for a body within the limit with Expect: 100-continue, and admits it', async () => {
    const answer = await nodePost(bodyOf(1_000), { expectContinue: true });
    expect(answer.continued).toBe(true);
    expect(answer.status).toBe(202);
  });

  it('closes without reading a body declared past the drain bound, and keeps serving', async () => {
    // Raw bytes: a client that announces 1 GiB and keeps writing until the server hangs up.
    let sent = 0;
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      const chunk = Buffer.alloc(64 * 1024, 'x');
      socket.on('connect', async () => {
        socket.write(`POST /v1/jobs HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${1024 * MiB}\r\n\r\n`);
        while (!socket.destroyed && sent < 1024 * MiB) {
          if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r).once('close', r));
          sent += chunk.length;
        }
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve());
    });
    expect(sent).toBeLessThan(DRAIN_LIMIT_BYTES + 64 * MiB); // only what the kernel buffers held
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
