// The stack the page tests run on, all in this process: a fresh test schema, a queue, the
// producer app listening on a free port of 127.0.0.1, optionally a worker, and headless Chromium
// with one page open (see ./browser). `close` shuts down what was started, last first; when a
// step fails, what was started before it is shut down the same way.
import type { Page } from 'playwright-core';
import { inject } from 'vitest';
import { buildApp } from '../../apps/producer/src/app';
import { RunledgerWorker } from '../../apps/worker/src/index';
import { openQueue, type QueueConfig } from '../../packages/queue/src/index';
import { type GraphRegistry, loadGraphs } from '../../packages/runtime/src/index';
import { launchBrowser, openPage } from './browser';
import { type TestDb, testDb } from './db';
import { queueConfigFor } from './stack';
import './provided';

export interface InProcessStackOptions {
  /** The queue's backend. Default postgres. */
  backend?: 'redis' | 'postgres';
  /** The graphs the producer and the worker serve. Default `loadGraphs()`. */
  graphs?: GraphRegistry;
  /** The producer's keys (buildApp's `security`). Default none. */
  security?: Parameters<typeof buildApp>[0]['security'];
  /** Starts an in-process worker with this id. Default: no worker. */
  workerId?: string;
  /** The page's viewport. Default openPage's. */
  viewport?: { width: number; height: number };
}

export interface InProcessStack {
  db: TestDb;
  q: QueueConfig;
  queue: ReturnType<typeof openQueue>;
  /** The producer's address, `http://127.0.0.1:<port>`. */
  base: string;
  page: Page;
  /** The page's console errors and page errors (openPage's). */
  problems: string[];
  /** A further worker on this stack's ledger and queue, started; the caller closes it. */
  startWorker(workerId: string, graphs: GraphRegistry): Promise<RunledgerWorker>;
  close(): Promise<void>;
}

export async function startInProcessStack(name: string, options: InProcessStackOptions = {}): Promise<InProcessStack> {
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c();
  };
  try {
    const db = await testDb(name);
    closers.push(() => db.close());
    const q = queueConfigFor(options.backend ?? 'postgres', db.url, db.schema, inject('redisUrl'));
    const queue = openQueue(q);
    closers.push(() => queue.close());
    // As the producer's listen() does: BullMQ's PostgreSQL tables exist before the first admission.
    if (q.backend === 'postgres') await queue.waitUntilReady();
    const graphs = options.graphs ?? (await loadGraphs());
    const app = buildApp({ ledger: db.ledger, queue, graphs, schema: db.schema, security: options.security });
    closers.push(() => app.close());
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const newWorker = (workerId: string, g: GraphRegistry) =>
      new RunledgerWorker({ ledger: db.ledger, queueConfig: q, graphs: g, workerId, schema: db.schema });
    if (options.workerId) {
      const worker = newWorker(options.workerId, graphs);
      closers.push(() => worker.close());
      await worker.start();
    }
    const browser = await launchBrowser();
    closers.push(() => browser.close());
    const { page, problems } = await openPage(browser, options.viewport);
    const startWorker = async (workerId: string, g: GraphRegistry) => {
      const worker = newWorker(workerId, g);
      await worker.start();
      return worker;
    };
    return { db, q, queue, base, page, problems, startWorker, close };
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}
