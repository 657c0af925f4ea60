// The ledger dashboard at /admin, in-process on a real ledger and queue: counts, filters, keyset
// paging, the job page (timeline, effects, checkpoints, the effect in doubt), confirmed actions
// through security's CSRF check, the chart JSON and the static files.
import { MemorySaver } from '@langchain/langgraph';
import { loadGraphs } from '@runledger/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, type Harness, startHarness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('dashboard', { backend: backends()[0] });
});
afterAll(() => h?.close());

const get = (url: string, cookie?: string) => h.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });

/** Opens the job page like a browser: its CSRF cookie and the token of its forms. */
async function openJobPage(jobId: string): Promise<{ body: string; cookie: string; token: string }> {
  const page = await get(`/admin/jobs/${jobId}`);
  expect(page.statusCode).toBe(200);
  const setCookie = [page.headers['set-cookie']].flat().find((c) => c?.startsWith('rl_csrf='));
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  if (!setCookie || !token) throw new Error('job page gave no CSRF cookie or token');
  return { body: page.body, cookie: setCookie.split(';')[0]!, token };
}

/** Submits an action form; the CSRF token comes from the page of `formsOf` (default the job itself). */
async function post(jobId: string, action: string, fields: Record<string, string>, formsOf = jobId) {
  const { cookie, token } = await openJobPage(formsOf);
  return h.app.inject({
    method: 'POST',
    url: `/admin/jobs/${jobId}/${action}`,
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: token, ...fields }).toString(),
  });
}

/** A job left in manual_reconcile with one effect in doubt, as a worker would leave it. */
async function inDoubt(): Promise<string> {
  const { job } = await h.db.ledger.admit({ graph: 'vacation', input: {} });
  const claim = await h.db.ledger.claim(job.jobId, 'dash-worker');
  if (!claim.ok) throw new Error(claim.reason);
  const token = claim.job.fencingToken;
  await h.db.ledger.recordEffectIntent(job.jobId, token, 'book:car', 'book_car', `${job.jobId}:book:car`);
  await h.db.ledger.requireManual(job.jobId, token, 'effect_in_doubt', { effect: 'book_car' });
  return job.jobId;
}

describe('dashboard pages', () => {
  it('shows counts by status and filters the list by status, graph and thread', async () => {
    const a = (await h.db.ledger.admit({ graph: 'echo', input: {}, threadId: 'dash-thread-a' })).job;
    await h.db.ledger.cancel(a.jobId);
    const b = (await h.db.ledger.admit({ graph: 'approval', input: { request: 'x' }, threadId: 'dash-thread-b' })).job;
    const counts = await h.db.ledger.countByStatus();
    const page = await get('/admin');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain(`<span class="n">${counts.cancelled}</span><span>cancelled</span>`);
    const cancelled = await get('/admin?status=cancelled');
    expect(cancelled.body).toContain(a.jobId);
    expect(cancelled.body).not.toContain(b.jobId);
    const byGraph = await get('/admin?graph=approval');
    expect(byGraph.body).toContain(b.jobId);
    expect(byGraph.body).not.toContain(a.jobId);
    const byThread = await get('/admin?threadId=dash-thread-a');
    expect(byThread.body).toContain(a.jobId);
    expect(byThread.body).not.toContain(b.jobId);
    expect(page.body).not.toMatch(/<script>|<style>| style="/);
  });

  it('pages through 60 jobs of a thread with a keyset cursor, without gaps or repeats', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 60; i++) ids.add((await h.db.ledger.admit({ graph: 'echo', input: {}, threadId: 'dash-paging' })).job.jobId);
    const first = await get('/admin?threadId=dash-paging');
    const cursor = /href="\/admin\?threadId=dash-paging&amp;cursor=(\d+)"/.exec(first.body)?.[1];
    expect(cursor).toBeDefined();
    const second = await get(`/admin?threadId=dash-paging&cursor=${cursor}`);
    const rows = (body: string) => [...body.matchAll(/<tr data-job-id="([^"]+)"/g)].map((m) => m[1]);
    expect(rows(first.body)).toHaveLength(50);
    expect(rows(second.body)).toHaveLength(10);
    expect(new Set([...rows(first.body), ...rows(second.body)])).toEqual(ids);
    expect(second.body).not.toContain('rel="next"');
  });

  it('shows a manual_reconcile job with its timeline, effects, checkpoints and the effect in doubt', async () => {
    const jobId = await inDoubt();
    const { body } = await openJobPage(jobId);
    expect(body).toContain('Needs a person');
    expect(body).toContain(`${jobId}:book:car`);
    expect(body).toMatch(/<td>claimed<\/td><td>1<\/td><td>1<\/td><td class="mono">dash-worker<\/td>/);
    expect(body).toContain('<td>manual_reconcile</td>');
    expect(body).toMatch(/<dt>Checkpoints<\/dt><dd>0<\/dd>/);
    for (const action of ['replay', 'resolve', 'cancel']) expect(body).toContain(`action="/admin/jobs/${jobId}/${action}"`);
    expect(body).not.toContain(`/admin/jobs/${jobId}/resume"`);
    expect(body).toMatch(/type="checkbox" name="confirm" value="yes" required/);
  });

  it('answers 404 with a page for an unknown job', async () => {
    const r = await get('/admin/jobs/no-such-job');
    expect(r.statusCode).toBe(404);
    expect(r.body).toContain('not found');
  });
});

describe('dashboard actions', () => {
  it('refuses a replay without the confirmation and leaves the job as it was', async () => {
    const jobId = await inDoubt();
    const r = await post(jobId, 'replay', { note: 'no tick' });
    expect(r.statusCode).toBe(400);
    expect(r.body).toContain('Tick the confirmation box');
    expect((await h.db.ledger.get(jobId)).status).toBe('manual_reconcile');
  });

  it('refuses a form without the CSRF token', async () => {
    const jobId = await inDoubt();
    const r = await h.app.inject({
      method: 'POST',
      url: `/admin/jobs/${jobId}/replay`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'confirm=yes',
    });
    expect(r.statusCode).toBe(403);
    expect((await h.db.ledger.get(jobId)).status).toBe('manual_reconcile');
  });

  it('replays a confirmed manual_reconcile job, delivers it and says so on the job page', async () => {
    const jobId = await inDoubt();
    const r = await post(jobId, 'replay', { confirm: 'yes', note: 'checked the car provider' });
    expect(r.statusCode).toBe(303);
    expect(r.headers.location).toBe(`/admin/jobs/${jobId}?done=replay&enqueued=true`);
    const job = await h.db.ledger.get(jobId);
    expect(job).toMatchObject({ status: 'accepted', deliveries: 2, deliveryId: `${jobId}-d1` });
    expect((await h.db.ledger.effects(jobId))[0]?.status).toBe('failed');
    const events = await h.db.ledger.events(jobId);
    expect(events.at(-1)).toMatchObject({ type: 'enqueued' });
    expect(events.find((e) => e.type === 'replay_requested')?.detail).toEqual({ note: 'checked the car provider' });
    const page = await get(r.headers.location as string);
    expect(page.body).toContain('Replay requested. Delivered to the queue.');
  });

  it('resolves, resumes with a JSON value and cancels; refuses a bad value and an impossible action', async () => {
    const resolved = await inDoubt();
    expect((await post(resolved, 'resolve', { confirm: 'yes', outcome: 'failed', note: 'refunded' })).statusCode).toBe(303);
    expect((await h.db.ledger.get(resolved)).status).toBe('failed');
    // A finished job shows no forms: take the token from an open one, as a stale tab would.
    const again = await post(resolved, 'cancel', { confirm: 'yes' }, await inDoubt());
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('Cannot cancel');

    const { job } = await h.db.ledger.admit({ graph: 'approval', input: { request: 'laptop' } });
    const claim = await h.db.ledger.claim(job.jobId, 'dash-worker');
    if (!claim.ok) throw new Error(claim.reason);
    await h.db.ledger.park(job.jobId, claim.job.fencingToken, [{ question: 'approve?' }]);
    expect((await post(job.jobId, 'resume', { confirm: 'yes', value: '{approved' })).statusCode).toBe(400);
    expect((await post(job.jobId, 'resume', { confirm: 'yes', value: '{"approved":true}' })).statusCode).toBe(303);
    expect(await h.db.ledger.get(job.jobId)).toMatchObject({ status: 'accepted', resumeValue: { value: { approved: true } } });
    expect((await post(job.jobId, 'cancel', { confirm: 'yes', note: 'not needed' })).statusCode).toBe(303);
    expect((await h.db.ledger.get(job.jobId)).status).toBe('cancelled');
  });

  it("pre-fills the resume box from the interrupt's own shape: the approval graph's { approved }, else true", async () => {
    // The interrupt exactly as the built-in approval graph raises it.
    const graph = (await loadGraphs()).get('approval')!.build(new MemorySaver());
    const config = { configurable: { thread_id: `prefill-${Date.now()}` } };
    await graph.invoke({ request: 'laptop' }, config);
    const interrupts = (await graph.getState(config)).tasks.flatMap((t) => t.interrupts.map((i) => i.value));
    const parked = async (values: unknown[]) => {
      const { job } = await h.db.ledger.admit({ graph: 'approval', input: { request: 'laptop' } });
      const claim = await h.db.ledger.claim(job.jobId, 'dash-worker');
      if (!claim.ok) throw new Error(claim.reason);
      await h.db.ledger.park(job.jobId, claim.job.fencingToken, values);
      return /<textarea name="value"[^>]*>([^<]*)<\/textarea>/.exec((await openJobPage(job.jobId)).body)?.[1]?.replaceAll('&quot;', '"');
    };
    expect(await parked(interrupts)).toBe('{"approved":true}');
    expect(await parked([{ question: 'Ship it?', resume: { ship: 'yes' } }])).toBe('{"ship":"yes"}');
    expect(await parked(['continue?'])).toBe('true');
  });

  it('shows which job a waiting job waits for, and cancelling that one delivers the waiting job', async () => {
    const threadId = `dash-wait-${Date.now()}`;
    const holder = (await h.db.ledger.admit({ graph: 'echo', input: {}, threadId })).job;
    const waiting = (await h.db.ledger.admit({ graph: 'echo', input: {}, threadId })).job;
    const { body } = await openJobPage(waiting.jobId);
    expect(body).toContain(`<dt>Waiting for</dt><dd>job <a class="mono" href="/admin/jobs/${holder.jobId}">${holder.jobId}</a>`);
    expect((await post(holder.jobId, 'cancel', { confirm: 'yes' })).statusCode).toBe(303);
    expect(await h.db.ledger.get(waiting.jobId)).toMatchObject({ blockedBy: null, deliveries: 2 });
    expect((await openJobPage(waiting.jobId)).body).not.toContain('Waiting for');
  });

  it('shows why a job held back by its graph limit waits, until it runs', async () => {
    const graph = `dash-limited-${Date.now()}`;
    await h.db.ledger.limits.set(graph, { maxConcurrent: 1 });
    const running = (await h.db.ledger.admit({ graph, input: {} })).job;
    const waiting = (await h.db.ledger.admit({ graph, input: {} })).job;
    const first = await h.db.ledger.claimLimited(running.jobId, 'dash-worker');
    if (!first.ok) throw new Error(first.reason);
    expect(await h.db.ledger.claimLimited(waiting.jobId, 'dash-worker')).toMatchObject({ ok: false, reason: 'rate_limited' });
    const { body } = await openJobPage(waiting.jobId);
    expect(body).toContain(`<dt>Held back</dt><dd>by the limit of graph ${graph}: at most 1 of its runs may hold a lease at once, and that many do.`);
    await h.db.ledger.complete(running.jobId, first.job.fencingToken, {});
    expect((await h.db.ledger.claimLimited(waiting.jobId, 'dash-worker')).ok).toBe(true);
    expect((await openJobPage(waiting.jobId)).body).not.toContain('Held back');
    await h.db.ledger.limits.remove(graph);
  });
});

describe('dashboard charts and files', () => {
  it('counts transitions per bucket and recovery times from the timeline', async () => {
    const { job } = await h.db.ledger.admit({ graph: 'echo', input: {} });
    const first = await h.db.ledger.claim(job.jobId, 'dash-worker');
    if (!first.ok) throw new Error(first.reason);
    await h.db.ledger.release(job.jobId, first.job.fencingToken);
    expect((await h.db.ledger.claim(job.jobId, 'dash-worker')).ok).toBe(true);
    const events = await h.db.ledger.events(job.jobId);
    const expectedMs = events.at(-1)!.at.getTime() - events.find((e) => e.type === 'recovery_required')!.at.getTime();

    const t = (await get('/admin/api/transitions?hours=1')).json();
    expect(t.labels.length).toBe(t.series[0].data.length);
    const total = (name: string) => t.series.find((s: { name: string }) => s.name === name).data.reduce((a: number, b: number) => a + b, 0);
    const [accepted] = (await h.db.ledger.pool.query("SELECT count(*)::int AS n FROM job_events WHERE type = 'accepted'")).rows;
    expect(total('accepted')).toBe(accepted.n);
    expect(total('recovery_required')).toBeGreaterThanOrEqual(1);

    const r = (await get('/admin/api/recoveries?hours=1')).json();
    expect(r.recoveries.reduce((a: number, b: number) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(r.recovered.reduce((a: number, b: number) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...r.max.filter((x: number | null) => x !== null))).toBeGreaterThanOrEqual(expectedMs - 1);
  });

  it('serves Chart.js, the script and the stylesheet from this server', async () => {
    const chart = await get('/admin/static/chart.umd.min.js');
    expect(chart.statusCode).toBe(200);
    expect(chart.headers['content-type']).toContain('javascript');
    expect(chart.body).toContain('Chart');
    expect((await get('/admin/static/dashboard.js')).body).toContain('canvas.dataset.src');
    expect((await get('/admin/static/dashboard.css')).headers['content-type']).toContain('text/css');
    expect((await get('/admin/static/secrets.txt')).statusCode).toBe(404);
  });
});
