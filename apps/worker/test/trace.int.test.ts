// One job's spans share one trace, from the producer's admission through the queue to the
// worker's attempts and the graph's nodes, even across a failed attempt and its redelivery; and
// the worker's log lines of a run carry the job, thread, attempt, token and trace ids, with
// secrets and payloads masked. Real producer and worker in-process, real PostgreSQL and queue.
import { Writable } from 'node:stream';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../../../apps/producer/src/app';
import { openQueue } from '../../../packages/queue/src/index';
import { loadGraphs } from '../../../packages/runtime/src/index';
import { startTracing, type Tracing } from '../../../packages/telemetry/src/index';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { queueConfigFor, waitForStatus } from '../../../test/support/stack';
import { RunledgerWorker } from '../src/index';
import { createLogger } from '../src/log';
import { createObservability, type Observability } from '../src/telemetry-wiring';
import '../../../test/support/provided';

const backend = inject('redisUrl') ? 'redis' : 'postgres';
const exporter = new InMemorySpanExporter();
const lines: Array<Record<string, unknown>> = [];
const capture = new Writable({
  write(chunk, _enc, done) {
    for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
    done();
  },
});

let tracing: Tracing;
let db: TestDb;
let app: ReturnType<typeof buildApp>;
let queue: ReturnType<typeof openQueue>;
let worker: RunledgerWorker;
let obs: Observability;

beforeAll(async () => {
  tracing = startTracing({ serviceName: 'runledger-test', exporter });
  db = await testDb('trace', { leaseTtlMs: 2_000 });
  const q = queueConfigFor(backend, db.url, db.schema, inject('redisUrl'));
  queue = openQueue(q);
  app = buildApp({ ledger: db.ledger, queue, graphs: await loadGraphs(), schema: db.schema, tracer: tracing.tracer });
  await app.ready();
  const log = createLogger({ service: 'worker', workerId: 'trace-worker' }, 'info', capture);
  obs = await createObservability({ ledger: db.ledger, log, metricsPort: 0, tracing: { tracer: tracing.tracer } });
  worker = new RunledgerWorker({
    ledger: db.ledger,
    queueConfig: q,
    graphs: obs.graphs(await loadGraphs()),
    workerId: 'trace-worker',
    schema: db.schema,
    sweepIntervalMs: 200,
    log,
    aroundDelivery: obs.aroundDelivery,
    onOutcome: obs.onOutcome,
  });
  await worker.start();
  await obs.start(worker);
});
afterAll(async () => {
  await worker?.close();
  await obs?.close();
  await app?.close();
  await queue?.close();
  await tracing?.shutdown();
  await db?.close();
});

const attr = (s: ReadableSpan, key: string) => s.attributes[key];
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

async function admitAndFinish(input: object): Promise<{ jobId: string; spans: ReadableSpan[] }> {
  const r = await app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input } });
  expect(r.statusCode).toBe(202);
  const { jobId } = r.json();
  expect((await waitForStatus(db.ledger, jobId, ['completed', 'failed'])).status).toBe('completed');
  const admit = await waitFor('the admission span', async () =>
    exporter.getFinishedSpans().find((s) => s.name === 'runledger.admit' && attr(s, 'runledger.job_id') === jobId),
  );
  const traceId = admit.spanContext().traceId;
  // The attempt span ends just after the ledger write the test waited for.
  const spans = await waitFor('the last attempt span', async () => {
    const mine = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    return mine.some((s) => s.name === 'runledger.attempt' && attr(s, 'runledger.outcome') === 'completed') && mine;
  });
  return { jobId, spans };
}

describe('tracing one job', () => {
  it('puts the admission, the attempt, the graph and every node in one trace, nested', async () => {
    const { jobId, spans } = await admitAndFinish({ steps: 3 });
    const [admit] = spans.filter((s) => s.name === 'runledger.admit');
    const attempts = spans.filter((s) => s.name === 'runledger.attempt');
    const graphs = spans.filter((s) => s.name === 'graph echo');
    const nodes = spans.filter((s) => s.name === 'node step');
    expect(admit).toBeDefined();
    expect(attempts).toHaveLength(1);
    expect(graphs).toHaveLength(1);
    expect(nodes).toHaveLength(3);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(parentOf(attempts[0]!)).toBe(admit!.spanContext().spanId);
    expect(parentOf(graphs[0]!)).toBe(attempts[0]!.spanContext().spanId);
    for (const n of nodes) expect(parentOf(n)).toBe(graphs[0]!.spanContext().spanId);
    expect(attempts[0]!.attributes).toMatchObject({ 'runledger.job_id': jobId, 'runledger.attempt': 1, 'runledger.decision': 'start' });
    expect(await db.ledger.pool.query('SELECT trace_context FROM jobs WHERE job_id = $1', [jobId]).then((r) => r.rows[0].trace_context)).toContain(
      admit!.spanContext().traceId,
    );
  });

  it('keeps a failed attempt and the redelivered one that resumes it in the admission’s trace', async () => {
    const { spans } = await admitAndFinish({ steps: 2, failTimes: 1 });
    const attempts = spans
      .filter((s) => s.name === 'runledger.attempt')
      .sort((a, b) => Number(attr(a, 'runledger.attempt')) - Number(attr(b, 'runledger.attempt')));
    expect(attempts.map((s) => [attr(s, 'runledger.attempt'), attr(s, 'runledger.outcome'), attr(s, 'runledger.decision')])).toEqual([
      [1, 'retry', 'start'],
      [2, 'completed', 'resume'],
    ]);
    const admit = spans.find((s) => s.name === 'runledger.admit')!;
    for (const a of attempts) expect(parentOf(a)).toBe(admit.spanContext().spanId);
    expect(spans.filter((s) => s.name === 'node step' && s.status.code === 2)).toHaveLength(1);
  });
});

describe('worker log lines', () => {
  it('carry job, thread, attempt, token and trace ids on the lines of a run', async () => {
    const { jobId, spans } = await admitAndFinish({ steps: 1 });
    const run = lines.filter((l) => l.jobId === jobId);
    expect(run.length).toBeGreaterThan(0);
    for (const l of run) {
      expect(l).toMatchObject({ level: 'info', workerId: 'trace-worker', threadId: jobId, attempt: 1, token: 1, traceId: spans[0]!.spanContext().traceId });
      expect(typeof l.time).toBe('string');
    }
  });

  it('masks authorization headers, keys, passwords and payloads', () => {
    const log = createLogger({ service: 'worker' }, 'info', capture);
    log('warn', 'masked', { input: { card: '4111' }, result: { ok: 1 }, headers: { authorization: 'Bearer k-123' }, key: 'k-123', password: 'p-456' });
    const line = lines.findLast((l) => l.msg === 'masked')!;
    expect(JSON.stringify(line)).not.toMatch(/4111|k-123|p-456|"ok"/);
    expect(line).toMatchObject({
      input: '[redacted]',
      result: '[redacted]',
      key: '[redacted]',
      password: '[redacted]',
      headers: { authorization: '[redacted]' },
    });
  });
});
