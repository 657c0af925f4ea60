// The producer's /metrics: admissions by outcome with their latency, operator transitions, and
// the ledger and queue gauges read at scrape time. Real PostgreSQL and queue; an unreachable
// PostgreSQL for db_unavailable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, CLOSED_PG_URL, type Harness, startHarness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('metrics', { backend: backends()[0] });
});
afterAll(() => h?.close());

/** The value of one sample in Prometheus text, or 0 when absent. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const scrape = async (app = h.app) => {
  const r = await app.inject({ method: 'GET', url: '/metrics' });
  expect(r.statusCode).toBe(200);
  expect(r.headers['content-type']).toContain('text/plain');
  return r.body;
};
const submit = (payload: object, key?: string) => h.app.inject({ method: 'POST', url: '/v1/jobs', payload, headers: key ? { 'idempotency-key': key } : {} });

describe('producer metrics', () => {
  it('counts admissions by outcome and times them', async () => {
    const before = await scrape();
    expect((await submit({ graph: 'echo', input: {} }, 'm-key')).statusCode).toBe(202);
    expect((await submit({ graph: 'echo', input: {} }, 'm-key')).statusCode).toBe(200);
    expect((await submit({ graph: 'echo', input: { steps: 2 } }, 'm-key')).statusCode).toBe(409);
    expect((await submit({ graph: 'no_such_graph', input: {} })).statusCode).toBe(422);
    const after = await scrape();
    const delta = (outcome: string) =>
      sample(after, 'runledger_admissions_total', `outcome="${outcome}"`) - sample(before, 'runledger_admissions_total', `outcome="${outcome}"`);
    expect([delta('created'), delta('duplicate'), delta('conflict'), delta('rejected')]).toEqual([1, 1, 1, 1]);
    const count = (t: string) => sample(t, 'runledger_admission_duration_seconds_count', 'outcome="created"');
    expect(count(after) - count(before)).toBe(1);
    expect(sample(after, 'runledger_job_transitions_total', 'to="accepted"')).toBeGreaterThanOrEqual(1);
  });

  it('reports the ledger’s jobs and effects by status and the queue’s depth', async () => {
    const jobs = await h.db.ledger.countByStatus();
    const text = await scrape();
    for (const [status, n] of Object.entries(jobs)) expect(sample(text, 'runledger_jobs', `status="${status}"`)).toBe(n);
    expect(text).toMatch(/^runledger_queue_jobs\{state="waiting"\} \d+/m);
    expect(sample(text, 'runledger_jobs_waiting_for_thread')).toBe(await h.db.ledger.countWaitingForThread());
    expect(sample(text, 'runledger_queue_jobs', 'state="waiting"')).toBeGreaterThanOrEqual(1);
  });

  it('counts the jobs waiting for their thread', async () => {
    const threadId = `metrics-wait-${Date.now()}`;
    const before = sample(await scrape(), 'runledger_jobs_waiting_for_thread');
    for (let i = 0; i < 3; i++) expect((await submit({ graph: 'echo', input: {}, threadId })).statusCode).toBe(202);
    // The first job of the thread may run; the two behind it wait.
    expect(sample(await scrape(), 'runledger_jobs_waiting_for_thread') - before).toBe(2);
  });

  it('counts operator transitions made through the API', async () => {
    const { jobId } = (await submit({ graph: 'echo', input: {} })).json();
    const before = await scrape();
    expect((await h.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/cancel`, payload: {} })).statusCode).toBe(200);
    expect((await h.app.inject({ method: 'POST', url: `/v1/jobs/${jobId}/cancel`, payload: {} })).statusCode).toBe(409);
    const after = await scrape();
    expect(sample(after, 'runledger_job_transitions_total', 'to="cancelled"') - sample(before, 'runledger_job_transitions_total', 'to="cancelled"')).toBe(1);
  });

  it('counts an admission refused because PostgreSQL is down as db_unavailable', async () => {
    const down = await startHarness('metrics_down', { backend: 'postgres', appDatabaseUrl: CLOSED_PG_URL, db: h.db });
    try {
      const r = await down.app.inject({ method: 'POST', url: '/v1/jobs', payload: { graph: 'echo', input: {} } });
      expect(r.statusCode).toBe(503);
      expect(sample(await scrape(down.app), 'runledger_admissions_total', 'outcome="db_unavailable"')).toBe(1);
    } finally {
      await down.close();
    }
  });
});
