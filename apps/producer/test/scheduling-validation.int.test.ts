// Bad scheduling input is refused with a clear 4xx and writes nothing: an invalid cron
// expression or time zone, a runAt too far in the past, a priority out of range, runAt with
// delayMs; in a batch the bad job alone is refused. Row counts (jobs, events, crons, firings)
// and the queue's counts are the same before and after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';

describe('scheduling input that is refused', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('sched_validation');
  });
  afterAll(() => h?.close());

  const counts = async () => {
    const r = await h.db.ledger.pool.query(
      'SELECT (SELECT count(*) FROM jobs)::int AS jobs, (SELECT count(*) FROM job_events)::int AS events, (SELECT count(*) FROM crons)::int AS crons, (SELECT count(*) FROM cron_firings)::int AS firings',
    );
    return { ...r.rows[0], queue: await h.queue.getJobCounts() };
  };
  const send = (url: string, payload: object) => h.app.inject({ method: 'POST', url, payload });
  const longAgo = new Date(Date.now() - 10 * 60_000).toISOString();

  const cases: Array<{ name: string; url: string; payload: object; status: number; code: string; mentions: string }> = [
    {
      name: 'invalid cron expression',
      url: '/v1/crons',
      payload: { graph: 'echo', input: {}, schedule: 'every tuesday' },
      status: 400,
      code: 'invalid_request',
      mentions: 'cron expression',
    },
    {
      name: 'cron with too many fields',
      url: '/v1/crons',
      payload: { graph: 'echo', input: {}, schedule: '* * * * * * * *' },
      status: 400,
      code: 'invalid_request',
      mentions: 'cron expression',
    },
    {
      name: 'unknown time zone',
      url: '/v1/crons',
      payload: { graph: 'echo', input: {}, schedule: '0 3 * * *', timezone: 'Mars/Olympus' },
      status: 400,
      code: 'invalid_request',
      mentions: 'time zone',
    },
    {
      name: 'unknown missed policy',
      url: '/v1/crons',
      payload: { graph: 'echo', input: {}, schedule: '0 3 * * *', missed: 'all' },
      status: 400,
      code: 'invalid_request',
      mentions: 'missed',
    },
    {
      name: 'cron of an unknown graph',
      url: '/v1/crons',
      payload: { graph: 'nope', input: {}, schedule: '0 3 * * *' },
      status: 422,
      code: 'unknown_graph',
      mentions: 'nope',
    },
    {
      name: 'runAt 10 minutes ago',
      url: '/v1/jobs',
      payload: { graph: 'echo', input: {}, runAt: longAgo },
      status: 400,
      code: 'invalid_schedule',
      mentions: 'in the past',
    },
    {
      name: 'runAt and delayMs',
      url: '/v1/jobs',
      payload: { graph: 'echo', input: {}, delayMs: 10, runAt: new Date().toISOString() },
      status: 400,
      code: 'invalid_schedule',
      mentions: 'not both',
    },
    {
      name: 'runAt without offset',
      url: '/v1/jobs',
      payload: { graph: 'echo', input: {}, runAt: '2030-01-01 10:00' },
      status: 400,
      code: 'invalid_request',
      mentions: 'runAt',
    },
    {
      name: 'delayMs negative',
      url: '/v1/jobs',
      payload: { graph: 'echo', input: {}, delayMs: -1 },
      status: 400,
      code: 'invalid_request',
      mentions: 'delayMs',
    },
    {
      name: 'priority above 1000',
      url: '/v1/jobs',
      payload: { graph: 'echo', input: {}, priority: 1001 },
      status: 400,
      code: 'invalid_request',
      mentions: 'priority',
    },
    {
      name: 'priority negative',
      url: '/v1/jobs',
      payload: { graph: 'echo', input: {}, priority: -1 },
      status: 400,
      code: 'invalid_request',
      mentions: 'priority',
    },
    {
      name: 'priority not an integer',
      url: '/v1/jobs',
      payload: { graph: 'echo', input: {}, priority: 1.5 },
      status: 400,
      code: 'invalid_request',
      mentions: 'priority',
    },
  ];

  for (const c of cases) {
    it(`${c.name}: ${c.status} ${c.code}, nothing written`, async () => {
      const before = await counts();
      const res = await send(c.url, c.payload);
      expect(res.statusCode).toBe(c.status);
      const body = res.json();
      expect(body.error.code).toBe(c.code);
      expect(body.error.message).toContain(c.mentions);
      expect(await counts()).toEqual(before);
    });
  }

  it('a batch refuses only its job with a bad priority or runAt', async () => {
    const before = await counts();
    const res = await send('/v1/jobs/batch', {
      jobs: [
        { graph: 'echo', input: {}, priority: 5000 },
        { graph: 'echo', input: {}, runAt: longAgo },
      ],
    });
    expect(res.statusCode).toBe(200);
    const results = res.json().results as Array<{ status: number; body: { error: { code: string } } }>;
    expect(results.map((r) => [r.status, r.body.error.code])).toEqual([
      [400, 'invalid_request'],
      [400, 'invalid_schedule'],
    ]);
    expect(await counts()).toEqual(before);
  });

  it('a valid delayed, prioritized job and a valid cron are accepted and stored as asked', async () => {
    const runAt = new Date(Date.now() + 60_000).toISOString();
    const job = await send('/v1/jobs', { graph: 'echo', input: {}, runAt, priority: 7 });
    expect(job.statusCode).toBe(202);
    const view = (await h.app.inject({ method: 'GET', url: `/v1/jobs/${job.json().jobId}` })).json();
    expect(view.runAfter).toBe(runAt);
    expect(view.priority).toBe(7);
    const cron = await send('/v1/crons', { graph: 'echo', input: {}, schedule: '0 3 * * *', timezone: 'Europe/Paris' });
    expect(cron.statusCode).toBe(201);
    // 03:00 in Paris is 01:00 or 02:00 UTC.
    expect([1, 2]).toContain(new Date(cron.json().nextFireAt).getUTCHours());
  });
});
