// Tokens through the LangGraph API's durable stream, end to end: the producer app (in this
// process, listening) and one worker process on a fresh schema; POST /threads/:id/runs/stream of
// the chat graph with a 400-character reply streamed at full speed (the fake model sleeps 0 ms
// between tokens), read as SSE by fetch. Time to first token: from the request to the first
// `messages` event; token events/s: from the first to the last `messages` event. Both include
// the worker's appends to the PostgreSQL log and the producer's 50 ms tail.
import type { AddressInfo } from 'node:net';
import { buildApp } from '../apps/producer/src/app';
import { openQueue } from '../packages/queue/src/index';
import { loadGraphs } from '../packages/runtime/src/index';
import { benchSchema } from './bench-schema';
import { type BenchOptions, type Figure, size, summarize } from './figures';
import { benchQueueConfig, startWorker, stop } from './lib/processes';

const REPLY = 'x'.repeat(390);

/** One streamed run: ms to the first token event, and token events per second after it. */
async function streamOnce(url: string): Promise<{ ttftMs: number; tokensPerSecond: number; tokens: number }> {
  const thread = (await (await fetch(`${url}/threads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as {
    thread_id: string;
  };
  const t0 = performance.now();
  const r = await fetch(`${url}/threads/${thread.thread_id}/runs/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ assistant_id: 'chat', input: { messages: REPLY, tokenDelayMs: 0 }, stream_mode: 'messages-tuple' }),
  });
  if (!r.ok || !r.body) throw new Error(`stream answered ${r.status}`);
  const decoder = new TextDecoder();
  let first = 0;
  let last = 0;
  let tokens = 0;
  for await (const bytes of r.body) {
    const n = (decoder.decode(bytes as Uint8Array, { stream: true }).match(/^event: messages$/gm) ?? []).length;
    if (n === 0) continue;
    last = performance.now();
    if (tokens === 0) first = last;
    tokens += n;
  }
  return { ttftMs: first - t0, tokensPerSecond: tokens > 1 ? (tokens - 1) / ((last - first) / 1000) : 0, tokens };
}

export async function run(opts: BenchOptions): Promise<Figure[]> {
  const runs = size(opts, { smoke: 2, quick: 8, full: 20 });
  const db = await benchSchema(opts, 'stream_e2e');
  const q = benchQueueConfig(opts.redisUrl ? 'redis' : 'postgres', opts.databaseUrl, db.schema, opts.redisUrl);
  const queue = openQueue(q);
  const app = buildApp({ ledger: db.ledger, queue, graphs: await loadGraphs(), schema: db.schema });
  const worker = await startWorker(q, opts.databaseUrl, db.schema, 'bench-stream');
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    await streamOnce(url); // warm-up
    const ttft: number[] = [];
    const rate: number[] = [];
    for (let i = 0; i < runs; i++) {
      const one = await streamOnce(url);
      if (one.tokens < REPLY.length) throw new Error(`expected at least ${REPLY.length} token events, got ${one.tokens}`);
      ttft.push(one.ttftMs);
      rate.push(one.tokensPerSecond);
    }
    return [
      summarize('LangGraph API stream: time to first token', 'ms', ttft, 'request → first messages event, through the PostgreSQL log'),
      summarize('LangGraph API stream: token events/s to one client', 'events/s', rate),
    ];
  } finally {
    await stop(worker);
    await app.close();
    await queue.close();
    await db.drop();
  }
}
