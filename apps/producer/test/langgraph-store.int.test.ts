// The store (long-term memory) driven by the official SDK's `client.store` against a real producer
// and PostgreSQL: items, search, namespaces, refusals, tenants; a graph run on a real worker
// process writes the tenant's store through `config.store` (not the InMemoryStore it was compiled
// with); a write whose fence no longer holds changes nothing; and a worker process whose lease ran
// out mid-run writes nothing more, while the worker that recovers the run loses no item.
import path from 'node:path';
import { LeaseLostError, LedgerStore } from '@runledger/ledger';
import { loadGraphs } from '@runledger/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backdateLease, sleep } from '../../../test/support/db';
import type { Proc } from '../../../test/support/stack';
import { KEYS, type LangGraphStack, SDKS, startLangGraphStack, statusOf } from './langgraph-stack';

const config = path.join(import.meta.dirname, 'fixtures/store-project/langgraph.json');

let s: LangGraphStack;
let w1: Proc;
beforeAll(async () => {
  s = await startLangGraphStack('lg_store', { graphs: await loadGraphs({ configPath: config, env: {}, notice: () => {} }) });
  w1 = s.worker('lg-store-w1', { RUNLEDGER_CONFIG: config });
});
afterAll(() => s?.close());

describe.each(SDKS)('the store through the SDK (SDK %s)', (sdk) => {
  const ns = (...labels: string[]) => [`sdk${sdk.replace(/\W/g, '')}`, ...labels];

  it('puts, reads, updates, searches, lists and deletes items', async () => {
    const client = s.client(KEYS.acme, sdk);
    expect((await client.store.searchItems(ns('empty'))).items).toEqual([]);
    expect(await client.store.getItem(ns('prefs'), 'missing')).toBeNull();

    await client.store.putItem(ns('prefs', 'ann'), 'theme', { color: 'blue', size: 2 });
    const first = await client.store.getItem(ns('prefs', 'ann'), 'theme');
    expect(first).toMatchObject({ namespace: ns('prefs', 'ann'), key: 'theme', value: { color: 'blue', size: 2 } });
    expect(Date.parse(String(first?.createdAt))).toBeGreaterThan(0);

    await sleep(5);
    await client.store.putItem(ns('prefs', 'ann'), 'theme', { color: 'red', size: 2 });
    const second = await client.store.getItem(ns('prefs', 'ann'), 'theme');
    expect(second?.value).toEqual({ color: 'red', size: 2 });
    expect(second?.createdAt).toBe(first?.createdAt);
    expect(Date.parse(String(second?.updatedAt))).toBeGreaterThan(Date.parse(String(first?.updatedAt)));

    await client.store.putItem(ns('prefs', 'bob'), 'theme', { color: 'red', size: 3 });
    await client.store.putItem(ns('notes', 'bob'), 'n1', { text: 'hi' });
    const red = await client.store.searchItems(ns('prefs'), { filter: { color: 'red' } });
    expect(red.items.map((i) => i.namespace.at(-1)).sort()).toEqual(['ann', 'bob']);
    expect((await client.store.searchItems(ns('prefs'), { filter: { color: 'red', size: 3 } })).items.map((i) => i.key)).toEqual(['theme']);
    expect((await client.store.searchItems(ns(), { limit: 1 })).items).toHaveLength(1);
    expect((await client.store.searchItems(ns(), { limit: 10, offset: 2 })).items).toHaveLength(1);

    const all = await client.store.listNamespaces({ prefix: ns() });
    expect(all.namespaces).toEqual([ns('notes', 'bob'), ns('prefs', 'ann'), ns('prefs', 'bob')]);
    expect((await client.store.listNamespaces({ prefix: [ns()[0] as string, '*', 'bob'] })).namespaces).toEqual([ns('notes', 'bob'), ns('prefs', 'bob')]);
    expect((await client.store.listNamespaces({ prefix: ns(), suffix: ['ann'] })).namespaces).toEqual([ns('prefs', 'ann')]);
    expect((await client.store.listNamespaces({ prefix: ns(), maxDepth: 2 })).namespaces).toEqual([ns('notes'), ns('prefs')]);

    await client.store.deleteItem(ns('prefs', 'ann'), 'theme');
    expect(await client.store.getItem(ns('prefs', 'ann'), 'theme')).toBeNull();
    // Deleting what is not there is not an error, as on LangGraph's server.
    await client.store.deleteItem(ns('prefs', 'ann'), 'theme');
  });

  it('refuses what it cannot honour (422) and malformed items (400), and writes nothing', async () => {
    const client = s.client(KEYS.acme, sdk);
    const put = (body: unknown) =>
      fetch(`${s.url}/store/items`, { method: 'PUT', headers: { 'x-api-key': KEYS.acme, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    for (const [body, field, status = 422] of [
      [{ namespace: ns('x'), key: 'k', value: { a: 1 }, index: ['a'] }, 'index'],
      [{ namespace: [], key: 'k', value: { a: 1 } }, 'namespace', 400],
      [{ namespace: ['', 'x'], key: 'k', value: { a: 1 } }, 'namespace', 400],
      [{ namespace: ['a.b'], key: 'k', value: { a: 1 } }, 'periods', 400],
      [{ namespace: ['a:b'], key: 'k', value: { a: 1 } }, 'colons', 400],
      [{ namespace: ['langgraph', 'x'], key: 'k', value: { a: 1 } }, 'reserved', 400],
      [{ namespace: ns('x'), key: 'k', value: 'not an object' }, 'value', 400],
    ] as const) {
      const res = await put(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(JSON.stringify(await res.json())).toContain(field);
    }
    expect(await statusOf(client.store.searchItems(ns('x'), { query: 'semantic' }))).toBe(422);
    expect(await client.store.getItem(ns('x'), 'k')).toBeNull();
  });

  it("keeps each tenant's store its own", async () => {
    await s.client(KEYS.acme, sdk).store.putItem(ns('secret'), 'k', { owner: 'acme' });
    const globex = s.client(KEYS.globex, sdk);
    expect(await globex.store.getItem(ns('secret'), 'k')).toBeNull();
    expect((await globex.store.searchItems(ns())).items).toEqual([]);
    expect((await globex.store.listNamespaces({ prefix: ns() })).namespaces).toEqual([]);
    await globex.store.putItem(ns('secret'), 'k', { owner: 'globex' });
    expect((await s.client(KEYS.acme, sdk).store.getItem(ns('secret'), 'k'))?.value).toEqual({ owner: 'acme' });
  });
});

describe('a graph on the store', () => {
  it("writes the tenant's PostgreSQL store through config.store, and reads it on the next run", async () => {
    const client = s.client(KEYS.acme);
    const thread = await client.threads.create();
    const first = (await client.runs.wait(thread.thread_id, 'memory', { input: { user: 'ann', note: 'likes tea' } })) as { before: string[] };
    expect(first.before).toEqual([]);
    const item = await client.store.getItem(['notes', 'ann'], 'likes tea');
    expect(item?.value).toEqual({ text: 'likes tea' });
    // Another thread, even another worker's memory: the store is the tenant's, not the process's.
    const other = await client.threads.create();
    const second = (await client.runs.wait(other.thread_id, 'memory', { input: { user: 'ann', note: 'hates coffee' } })) as { before: string[] };
    expect(second.before).toEqual(['likes tea']);
    expect(await s.client(KEYS.globex).store.getItem(['notes', 'ann'], 'likes tea')).toBeNull();
  });

  it('refuses a write once the lease is gone, and writes nothing', async () => {
    const { job } = await s.db.ledger.admit({ graph: 'memory', input: { user: 'zed', note: 'n' }, tenant: 'acme' });
    const claim = await s.db.ledger.claim(job.jobId, 'store-test', 60_000);
    if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
    const fenced = new LedgerStore(s.db.ledger.pool, { tenant: 'acme', fence: { jobId: job.jobId, fencingToken: claim.job.fencingToken } });
    await fenced.put(['fenced'], 'while-held', { ok: true });
    await backdateLease(s.db.ledger.pool, job.jobId);
    await expect(fenced.put(['fenced'], 'after-expiry', { ok: false })).rejects.toBeInstanceOf(LeaseLostError);
    await expect(fenced.delete(['fenced'], 'while-held')).rejects.toBeInstanceOf(LeaseLostError);
    const api = new LedgerStore(s.db.ledger.pool, { tenant: 'acme' });
    expect((await api.search(['fenced'])).map((i) => i.key)).toEqual(['while-held']);
  });
});

describe('a worker whose lease ran out mid-run', () => {
  it('writes nothing more, and the worker that recovers the run loses no item', async () => {
    w1.kill('SIGTERM');
    await w1.exited;
    // A long lease, so the worker believes it still holds the job when the database says it does not.
    const a = s.worker('lg-store-a', { RUNLEDGER_CONFIG: config, LEASE_TTL_MS: '60000' });
    const client = s.client(KEYS.acme);
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'journal', { input: { user: 'kim', waitMs: 3_000 } });
    const item = (key: string) => client.store.getItem(['journal', 'kim'], key);
    for (let i = 0; !(await item('first')) && i < 1200; i += 1) await sleep(50);
    expect((await item('first'))?.value).toEqual({ by: 'lg-store-a' });
    // The lease ends only once the step that wrote `first` is checkpointed: a lease that ran out
    // before that checkpoint would have the recovering worker rerun the step, writing `first` again.
    const nextIsSecond = async () => (await client.threads.getState(thread.thread_id)).next.includes('second');
    for (let i = 0; !(await nextIsSecond()) && i < 1200; i += 1) await sleep(50);
    expect(await nextIsSecond()).toBe(true);
    await backdateLease(s.db.ledger.pool, run.run_id);
    for (let i = 0; !a.output().includes('lease lost') && i < 1200; i += 1) await sleep(50);
    expect(a.output()).toContain('lease lost');
    expect(await item('second')).toBeNull();
    a.kill('SIGKILL');
    await a.exited;
    // The recovered job may have gone back to the same worker before its death, under a 60 s lease.
    await backdateLease(s.db.ledger.pool, run.run_id);
    s.worker('lg-store-b', { RUNLEDGER_CONFIG: config });
    await client.runs.join(thread.thread_id, run.run_id);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
    expect((await item('second'))?.value).toEqual({ by: 'lg-store-b' });
    expect((await item('first'))?.value).toEqual({ by: 'lg-store-a' });
    const job = (await s.db.ledger.pool.query('SELECT status, attempt FROM jobs WHERE job_id = $1', [run.run_id])).rows[0];
    expect(job.status).toBe('completed');
    expect(job.attempt).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
