// The LangGraph API's crons (/runs/crons) driven by the official SDK Client against a real
// producer, PostgreSQL, queue and worker process: create, search, count, update, delete; a cron
// firing through the producer's CronTicker (the one of /v1/crons) into a run that completes;
// bad input refused with nothing written.
import { CronExpressionParser } from 'cron-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { CronTicker } from '../src/cron-ticker';
import { KEYS, type LangGraphStack, SDKS, startLangGraphStack } from './langgraph-stack';

let s: LangGraphStack;
let ticker: CronTicker;
beforeAll(async () => {
  // Every 2 s is allowed here (CRON_MIN_INTERVAL_MS 1500), so a firing is seen within seconds.
  s = await startLangGraphStack('lg_crons', { cronLimits: { maxPerTenant: 100, minIntervalMs: 1500 } });
  s.worker('lg-crons-w1');
  ticker = new CronTicker({ ledger: s.db.ledger, queue: s.queue, tickMs: 250, graceMs: 5_000, enqueueTimeoutMs: 2_000, log: s.app.log });
  ticker.start();
});
afterAll(async () => {
  await ticker?.stop();
  await s?.close();
});

const nextUtc = (schedule: string) => CronExpressionParser.parse(schedule, { tz: 'UTC' }).next().toDate().toISOString();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const counts = async () =>
  (await s.db.ledger.pool.query('SELECT (SELECT count(*) FROM crons)::int AS crons, (SELECT count(*) FROM langgraph_threads)::int AS threads')).rows[0];

describe('LangGraph API through the SDK: crons', () => {
  it.each(SDKS)('create, createForThread, search, count, update and delete; per tenant, and listed by /v1/crons (SDK %s)', async (sdk) => {
    const client = s.client(KEYS.acme, sdk);
    const assistant = await client.assistants.create({ graphId: 'echo', config: { configurable: { tone: 'dry' } } });
    const c = await client.crons.create(assistant.assistant_id, { schedule: '0 4 * * *', input: { steps: 1 }, metadata: { owner: 'a' } });
    expect(c).toMatchObject({
      assistant_id: assistant.assistant_id,
      thread_id: null,
      on_run_completed: 'keep',
      schedule: '0 4 * * *',
      timezone: 'UTC',
      end_time: null,
      next_run_date: nextUtc('0 4 * * *'),
      metadata: { owner: 'a' },
      user_id: null,
      enabled: true,
      payload: { assistant_id: assistant.assistant_id, input: { steps: 1 }, metadata: { owner: 'a' }, config: { configurable: { tone: 'dry' } } },
    });
    expect(c.cron_id).toMatch(UUID);
    const thread = await client.threads.create();
    const end = '2099-01-01T00:00:00.000Z';
    const t = await client.crons.createForThread(thread.thread_id, 'echo', { schedule: '30 5 * * 1', input: { steps: 2 } });
    expect(t).toMatchObject({ thread_id: thread.thread_id, end_time: null, schedule: '30 5 * * 1', on_run_completed: null });
    // SDK 2.0.0 sends end_time on update only.
    expect(await client.crons.update(t.cron_id, { endTime: end })).toMatchObject({ end_time: end, next_run_date: nextUtc('30 5 * * 1') });

    expect((await client.crons.search()).map((x) => x.cron_id)).toEqual([t.cron_id, c.cron_id]);
    expect((await client.crons.search({ sortBy: 'created_at', sortOrder: 'asc' })).map((x) => x.cron_id)).toEqual([c.cron_id, t.cron_id]);
    expect((await client.crons.search({ threadId: thread.thread_id })).map((x) => x.cron_id)).toEqual([t.cron_id]);
    expect((await client.crons.search({ assistantId: assistant.assistant_id })).map((x) => x.cron_id)).toEqual([c.cron_id]);
    // A graph id names its default assistant.
    expect((await client.crons.search({ assistantId: 'echo' })).map((x) => x.cron_id)).toEqual([t.cron_id]);
    expect(await client.crons.search({ limit: 1, offset: 1 })).toHaveLength(1);
    expect(await client.crons.search({ select: ['cron_id', 'schedule'] as never, threadId: thread.thread_id })).toEqual([
      { cron_id: t.cron_id, schedule: '30 5 * * 1' },
    ]);
    expect(await client.crons.count()).toBe(2);
    expect(await client.crons.count({ assistantId: assistant.assistant_id })).toBe(1);

    // The same rows as /v1/crons, fired by the same ticker.
    const v1 = (await (await fetch(`${s.url}/v1/crons`, { headers: { 'x-api-key': KEYS.acme } })).json()) as { crons: Array<{ cronId: string }> };
    expect(v1.crons.map((x) => x.cronId).sort()).toEqual([c.cron_id, t.cron_id].sort());

    // Another tenant sees none of them.
    const other = s.client(KEYS.globex, sdk);
    expect(await other.crons.search()).toEqual([]);
    expect(await other.crons.count()).toBe(0);
    await expect(other.crons.delete(c.cron_id)).rejects.toThrow(/HTTP 404/);
    await expect(other.crons.update(c.cron_id, { enabled: false })).rejects.toThrow(/HTTP 404/);

    const off = await client.crons.update(c.cron_id, { schedule: '15 3 * * *', enabled: false, metadata: { owner: 'b' } });
    expect(off).toMatchObject({ schedule: '15 3 * * *', enabled: false, next_run_date: null, metadata: { owner: 'b' } });
    // What a firing runs is kept beside the change: the input, the assistant's config.
    expect(off.payload).toMatchObject({ input: { steps: 1 }, metadata: { owner: 'b' }, config: { configurable: { tone: 'dry' } } });
    const on = await client.crons.update(c.cron_id, { enabled: true, endTime: end, input: { steps: 4 } });
    expect(on).toMatchObject({ enabled: true, end_time: end, next_run_date: nextUtc('15 3 * * *'), payload: { input: { steps: 4 } } });
    expect(await client.crons.update(c.cron_id, { endTime: null })).toMatchObject({ end_time: null });
    expect(await client.crons.count({ enabled: true } as never)).toBe(2);

    await client.crons.delete(c.cron_id);
    await expect(client.crons.delete(c.cron_id)).rejects.toThrow(/HTTP 404/);
    expect((await client.crons.search()).map((x) => x.cron_id)).toEqual([t.cron_id]);
    await client.crons.delete(t.cron_id);
    expect(await client.crons.count()).toBe(0);
  });

  it('a cron fires runs of the assistant that complete: thread-less on a new thread each, a thread cron on its thread', async () => {
    const client = s.client();
    const assistant = await client.assistants.create({ graphId: 'echo', config: { configurable: { tone: 'wry' } } });
    const threadless = await client.crons.create(assistant.assistant_id, { schedule: '*/2 * * * * *', input: { steps: 2 }, metadata: { kind: 'fired' } });
    const thread = await client.threads.create();
    const onThread = await client.crons.createForThread(thread.thread_id, 'echo', { schedule: '*/2 * * * * *', input: { steps: 1 } });

    // The thread-less cron's firing is a run on a new thread tagged with its graph and assistant.
    const [fresh] = await waitFor(
      'a thread of a firing',
      async () => {
        const found = await client.threads.search({ metadata: { assistant_id: assistant.assistant_id } });
        return found.length ? found : undefined;
      },
      60_000,
    );
    const [run] = await waitFor(
      'its run',
      async () => {
        const runs = await client.runs.list(fresh?.thread_id as string);
        return runs.length ? runs : undefined;
      },
      60_000,
    );
    const values = (await client.runs.join(fresh?.thread_id as string, run?.run_id as string)) as { done: number };
    expect(values).toMatchObject({ done: 2 });
    const done = await client.runs.get(fresh?.thread_id as string, run?.run_id as string);
    expect(done).toMatchObject({ status: 'success', assistant_id: assistant.assistant_id, metadata: { kind: 'fired', cronId: threadless.cron_id } });
    expect((done as unknown as { kwargs: unknown }).kwargs).toMatchObject({ config: { configurable: { tone: 'wry' } } });
    // Recorded once under the cron's key, the run its job.
    const firing = await s.db.ledger.pool.query('SELECT outcome, job_id FROM cron_firings WHERE cron_id = $1 AND job_id = $2', [
      threadless.cron_id,
      run?.run_id,
    ]);
    expect(firing.rows).toEqual([{ outcome: 'admitted', job_id: run?.run_id }]);

    // The thread cron's firings are runs of its thread, one after another (listed newest first).
    const first = await waitFor('a run on the thread', async () => (await client.runs.list(thread.thread_id)).at(-1), 60_000);
    await client.runs.join(thread.thread_id, first.run_id);
    expect(await client.runs.get(thread.thread_id, first.run_id)).toMatchObject({ status: 'success', metadata: { cronId: onThread.cron_id } });
    expect((await client.threads.get(thread.thread_id)).values).toMatchObject({ log: expect.arrayContaining(['step 1']) });

    await client.crons.delete(threadless.cron_id);
    await client.crons.delete(onThread.cron_id);
    // Deleted: no more firings (the runs it made stay).
    const after = await s.db.ledger.pool.query("SELECT count(*)::int AS n FROM jobs WHERE metadata->>'cronId' IN ($1, $2)", [
      threadless.cron_id,
      onThread.cron_id,
    ]);
    await new Promise((r) => setTimeout(r, 2_500));
    const later = await s.db.ledger.pool.query("SELECT count(*)::int AS n FROM jobs WHERE metadata->>'cronId' IN ($1, $2)", [
      threadless.cron_id,
      onThread.cron_id,
    ]);
    expect(later.rows[0].n).toBe(after.rows[0].n);
    expect(after.rows[0].n).toBeGreaterThanOrEqual(2);
  }, 180_000);

  it('end_time stops the firings; CRON_MAX_PER_TENANT applies to SDK crons (429)', async () => {
    const client = s.client();
    const thread = await client.threads.create();
    const endTime = new Date(Date.now() + 1_000).toISOString();
    const c = await client.crons.createForThread(thread.thread_id, 'echo', { schedule: '*/2 * * * * *', input: { steps: 1 }, endTime });
    await new Promise((r) => setTimeout(r, 5_000));
    // At most the one time before the end (every 2 s, ending 1 s after creation).
    expect((await client.runs.list(thread.thread_id)).length).toBeLessThanOrEqual(1);
    expect((await client.crons.search({ threadId: thread.thread_id }))[0]).toMatchObject({ cron_id: c.cron_id, next_run_date: null });
    await client.crons.delete(c.cron_id);

    const capped = await s.producer({ cronLimits: { maxPerTenant: 1, minIntervalMs: 1500 } });
    const globex = capped.client(KEYS.globex);
    const first = await globex.crons.create('echo', { schedule: '0 4 * * *', input: {} });
    await expect(globex.crons.create('echo', { schedule: '0 5 * * *', input: {} })).rejects.toThrow(/HTTP 429.*CRON_MAX_PER_TENANT/);
    expect(await globex.crons.count()).toBe(1);
    await globex.crons.delete(first.cron_id);
  });

  it('bad input is refused and writes nothing: unknown assistant or thread 404, bad schedule and unsupported fields 422, malformed body 400', async () => {
    const client = s.client();
    const thread = await client.threads.create();
    const before = await counts();
    await expect(client.crons.create('no-such-assistant', { schedule: '0 4 * * *' })).rejects.toThrow(/HTTP 404.*Assistant not found/);
    await expect(client.crons.createForThread('00000000-0000-4000-8000-000000000000', 'echo', { schedule: '0 4 * * *', input: {} })).rejects.toThrow(
      /HTTP 404.*does not exist/,
    );
    await expect(client.crons.create('echo', { schedule: 'every day at 4', input: {} })).rejects.toThrow(/HTTP 422.*not a valid cron expression/);
    await expect(client.crons.create('echo', { schedule: '0 4 * * *', timezone: 'Mars/Olympus', input: {} })).rejects.toThrow(/HTTP 422.*IANA/);
    await expect(client.crons.create('echo', { schedule: '* * * * * *', input: {} })).rejects.toThrow(/HTTP 422.*CRON_MIN_INTERVAL_MS/);
    await expect(client.crons.create('echo', { schedule: '0 4 * * *', input: {}, webhook: 'https://example.com/hook' })).rejects.toThrow(
      /HTTP 422.*body\.webhook/,
    );
    await expect(client.crons.create('echo', { schedule: '0 4 * * *', input: {}, onRunCompleted: 'delete' })).rejects.toThrow(/HTTP 422.*on_run_completed/);
    await expect(client.crons.create('echo', { schedule: '0 4 * * *', input: {}, multitaskStrategy: 'reject' })).rejects.toThrow(
      /HTTP 422.*multitask_strategy/,
    );
    // SDK 2.0.0 sends if_not_exists (1.15.0 does not).
    const ifNotExists = await fetch(`${s.url}/threads/${thread.thread_id}/runs/crons`, {
      method: 'POST',
      headers: { 'x-api-key': KEYS.acme, 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'echo', schedule: '0 4 * * *', input: {}, if_not_exists: 'create' }),
    });
    expect([ifNotExists.status, ((await ifNotExists.json()) as { error: { message: string } }).error.message]).toEqual([
      422,
      expect.stringMatching(/if_not_exists/),
    ]);
    await expect(client.crons.create('echo', { schedule: '0 4 * * *', input: {}, endTime: 'tomorrow' })).rejects.toThrow(/HTTP 400.*end_time/);
    await expect(client.crons.create('echo', { schedule: '0 4 * * *', input: { steps: 'many' } })).rejects.toThrow(/HTTP 422/);
    await expect(client.crons.search({ metadata: { owner: 'a' } })).rejects.toThrow(/HTTP 422.*metadata/);
    expect(await counts()).toEqual(before);

    // An update is checked the same way and changes nothing when refused.
    const c = await client.crons.create('echo', { schedule: '0 4 * * *', input: { steps: 1 } });
    await expect(client.crons.update(c.cron_id, { schedule: '61 * * * *' })).rejects.toThrow(/HTTP 422/);
    await expect(client.crons.update(c.cron_id, { webhook: 'https://example.com/hook', enabled: false })).rejects.toThrow(/HTTP 422.*body\.webhook/);
    expect((await client.crons.search())[0]).toMatchObject({ schedule: '0 4 * * *', enabled: true });
    await client.crons.delete(c.cron_id);
  });
});
