// A full disk for real (issue 41, item 3): PostgreSQL on a small tmpfs of its own, filled until it
// answers 53100 disk_full. Admission answers 503 database_disk_full and writes nothing; a run
// whose checkpoint write meets the full disk stops without a further write and stays open; once
// the space is freed both complete, the run from its last checkpoint. Skips where a tmpfs cannot
// be mounted (not root, a container without mount permission).
import { randomBytes } from 'node:crypto';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../apps/producer/src/app';
import { type DeliveryOutcome, RunledgerWorker } from '../apps/worker/src/index';
import { createPool, Ledger, migrate } from '../packages/ledger/src/index';
import { openQueue } from '../packages/queue/src/index';
import { type GraphDefinition, loadGraphs } from '../packages/runtime/src/index';
import { waitFor } from './support/db';
import { type SmallDiskPostgres, smallDiskUnavailable, startPostgresOnSmallDisk } from './support/small-disk';
import { queueConfigFor } from './support/stack';
import './support/provided';

const last = <T>() => Annotation<T>({ reducer: (_a, b) => b, default: () => undefined as T });
const State = Annotation.Root({
  steps: last<number>(),
  /** 192 KB of random bytes, new at every step: each checkpoint needs fresh pages on the volume. */
  blob: last<string>(),
  seen: Annotation<number[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** `bulky`: `steps` steps of 400 ms, each writing a new incompressible blob into the state. */
const bulky: GraphDefinition = {
  name: 'bulky',
  description: 'Steps that each write a 256 KB blob (disk-full test).',
  build: (checkpointer) =>
    new StateGraph(State)
      .addNode('step', async (s) => {
        await new Promise((r) => setTimeout(r, 400));
        return { blob: randomBytes(192 * 1024).toString('base64'), seen: [s.seen.length + 1] };
      })
      .addEdge(START, 'step')
      .addConditionalEdges('step', (s) => (s.seen.length >= s.steps ? END : 'step'))
      .compile({ checkpointer })
      // One superstep per step, beyond LangGraph's default limit of 25.
      .withConfig({ recursionLimit: 200 }),
};

const unavailable = smallDiskUnavailable() ?? (inject('redisUrl') ? undefined : 'no Redis for the queue (the queue must not live on the full disk)');
if (unavailable) console.warn(`disk-full test skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('PostgreSQL out of disk (53100)', { timeout: 240_000 }, () => {
  const schema = 'ledger';
  let disk: SmallDiskPostgres;
  let ledger: Ledger;
  let app: FastifyInstance;
  let worker: RunledgerWorker;
  let base: string;
  const outcomes: Array<{ jobId: string; outcome: DeliveryOutcome }> = [];
  const closers: Array<() => Promise<unknown>> = [];
  const logLines: string[] = [];

  beforeAll(async () => {
    disk = await startPostgresOnSmallDisk();
    closers.push(() => disk.stop());
    await migrate({ connectionString: disk.url, schema });
    const pool = createPool({ connectionString: disk.url, schema, max: 12 });
    closers.push(() => pool.end());
    ledger = new Ledger(pool, { leaseTtlMs: 2_000 });
    const q = queueConfigFor('redis', disk.url, schema, inject('redisUrl'), `tdisk${randomBytes(3).toString('hex')}`);
    const queue = openQueue(q);
    closers.push(() => queue.close());
    const graphs = await loadGraphs({ env: {}, extra: [bulky], builtIns: true, notice: () => {} });
    app = buildApp({ ledger, queue, graphs, schema });
    closers.push(() => app.close());
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    worker = new RunledgerWorker({
      ledger,
      queueConfig: q,
      graphs,
      workerId: 'disk-w1',
      schema,
      sweepIntervalMs: 250,
      redeliverGraceMs: 500,
      log: (level, msg, fields) => logLines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`.slice(0, 400)),
      onOutcome: (jobId, outcome) => outcomes.push({ jobId, outcome }),
    });
    closers.push(() => worker.close());
    await worker.start();
  });
  afterAll(async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
  });

  const post = (url: string, body: unknown) =>
    fetch(`${base}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const rows = async () => {
    const { rows } = await ledger.pool.query<{ jobs: number; events: number; threads: number }>(
      'SELECT (SELECT count(*)::int FROM jobs) AS jobs, (SELECT count(*)::int FROM job_events) AS events, (SELECT count(*)::int FROM langgraph_threads) AS threads',
    );
    return rows[0];
  };
  const completed = (jobId: string) =>
    waitFor(`job ${jobId} to complete`, async () => (await ledger.get(jobId)).status === 'completed', 90_000, 200).catch(async (err) => {
      const events = (await ledger.events(jobId)).map((e) => `${e.type} ${JSON.stringify(e.detail ?? {}).slice(0, 200)}`);
      throw new Error(`${(err as Error).message}\nevents:\n${events.join('\n')}\nworker log (last 30):\n${logLines.slice(-30).join('\n')}`);
    });

  it('admission answers 503 database_disk_full and writes nothing; once space is freed it admits and the job runs', async () => {
    expect(await disk.fill()).toBeGreaterThan(10 * 1024 * 1024);
    const before = await rows();
    const refused = await post('/v1/jobs', { graph: 'echo', input: {}, idempotencyKey: 'disk-full-1' });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ error: { code: 'database_disk_full', message: expect.stringContaining('disk is full (SQLSTATE 53100)') } });
    // The LangGraph API's writes answer the same.
    const thread = await post('/threads', {});
    expect(thread.status).toBe(503);
    expect(((await thread.json()) as { error: { code: string } }).error.code).toBe('database_disk_full');
    expect(await rows()).toEqual(before);

    await disk.free();
    const admitted = await post('/v1/jobs', { graph: 'echo', input: {}, idempotencyKey: 'disk-full-1' });
    expect(admitted.status).toBe(202);
    await completed(((await admitted.json()) as { jobId: string }).jobId);
  });

  it('a run that meets the full disk stops without a write, stays open, and completes from its checkpoint once space is freed', async () => {
    const res = await post('/v1/jobs', { graph: 'bulky', input: { steps: 60 } });
    expect(res.status).toBe(202);
    const { jobId } = (await res.json()) as { jobId: string };
    await waitFor('the first checkpoint', async () => (await ledger.get(jobId)).firstCheckpointAt !== null, 30_000, 50);
    await disk.fill();
    const stopped = await waitFor('the run to stop on the full disk', async () => outcomes.find((o) => o.jobId === jobId), 30_000, 50);
    expect(stopped.outcome.outcome).toBe('database_disk_full');
    // Open, not failed and no retry spent: like a database outage, the lease and the reconciler decide.
    const held = await ledger.get(jobId);
    expect(['running', 'recovery_required']).toContain(held.status);
    expect(held.attempt).toBe(1);
    expect((await ledger.events(jobId)).map((e) => e.type)).not.toContain('failed');

    await disk.free();
    await completed(jobId);
    const done = await ledger.get(jobId);
    // Every step once in the state: the checkpoints the run left are whole and the next attempt resumed them.
    expect((done.result as { seen: number[] }).seen).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(done.attempt).toBe(2);
    const ran = outcomes.filter((o) => o.jobId === jobId && o.outcome.outcome !== 'refused').map((o) => o.outcome.outcome);
    expect(ran).toEqual(['database_disk_full', 'completed']);
  });
});
