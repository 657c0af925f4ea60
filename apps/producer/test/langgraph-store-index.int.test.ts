// The store's semantic index and ttls (langgraph.json `store.index`, `store.ttl`) driven by the
// official SDK's `client.store` against a real producer, PostgreSQL and a real worker process:
// a query ranks by cosine similarity with the fixture's deterministic embedding function and
// returns `score`; filters narrow it; `index: false` and per-put `index` fields; a graph's puts
// are embedded by the worker; items expire, reads refresh them, the sweep deletes them.
import path from 'node:path';
import { LedgerStore } from '@runledger/ledger';
import { loadGraphs, loadStoreConfig } from '@runledger/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../../../test/support/db';
import { KEYS, type LangGraphStack, startLangGraphStack } from './langgraph-stack';

const config = path.join(import.meta.dirname, 'fixtures/store-index-project/langgraph.json');

let s: LangGraphStack;
beforeAll(async () => {
  const store = await loadStoreConfig(config);
  s = await startLangGraphStack('lg_store_index', { graphs: await loadGraphs({ configPath: config, env: {}, notice: () => {} }), store });
  s.worker('lg-store-index-w1', { RUNLEDGER_CONFIG: config });
});
afterAll(() => s?.close());

const keysOf = (r: { items: Array<{ key: string }> }) => r.items.map((i) => i.key);

describe('semantic search', () => {
  it('ranks by similarity to the query and returns each score; filter, limit and offset apply', async () => {
    const client = s.client(KEYS.acme);
    await client.store.putItem(['pets'], 'k1', { text: 'cats purr', kind: 'cat' });
    await client.store.putItem(['pets'], 'k2', { text: 'dogs bark', kind: 'dog' });
    await client.store.putItem(['pets'], 'k3', { text: 'birds sing', kind: 'bird' });
    await client.store.putItem(['pets', 'more'], 'k4', { text: 'kittens and cats purr', kind: 'cat' });

    const dogs = await client.store.searchItems(['pets'], { query: 'dogs bark' });
    expect(dogs.items[0]?.key).toBe('k2');
    expect(dogs.items[0]?.score).toBeCloseTo(1, 5);
    expect(dogs.items.slice(1).every((i) => (i.score ?? 1) < 0.01)).toBe(true);

    const cats = await client.store.searchItems(['pets'], { query: 'cats purr' });
    expect(keysOf(cats).slice(0, 2)).toEqual(['k1', 'k4']);
    expect(cats.items[0]?.score).toBeGreaterThan(cats.items[1]?.score ?? 1);
    expect(cats.items[1]?.score).toBeGreaterThan(0.5);

    expect(keysOf(await client.store.searchItems(['pets'], { query: 'cats', filter: { kind: 'cat' } }))).toEqual(['k1', 'k4']);
    expect(keysOf(await client.store.searchItems(['pets'], { query: 'birds', filter: { kind: 'cat' } })).sort()).toEqual(['k1', 'k4']);
    expect(keysOf(await client.store.searchItems(['pets', 'more'], { query: 'cats' }))).toEqual(['k4']);
    expect(keysOf(await client.store.searchItems(['pets'], { query: 'cats purr', limit: 1, offset: 1 }))).toEqual(['k4']);
    // Without a query: no score, newest first, as before.
    const plain = await client.store.searchItems(['pets']);
    expect(keysOf(plain)[0]).toBe('k4');
    expect(plain.items.every((i) => i.score === undefined)).toBe(true);
    // An update re-embeds: k3 now matches dogs.
    await client.store.putItem(['pets'], 'k3', { text: 'dogs', kind: 'dog' });
    expect(keysOf(await client.store.searchItems(['pets'], { query: 'dogs' }))[0]).toBe('k3');
  });

  it('skips the index with `index: false` and embeds the fields a put names', async () => {
    const client = s.client(KEYS.acme);
    await client.store.putItem(['docs'], 'indexed', { text: 'tea' });
    await client.store.putItem(['docs'], 'skipped', { text: 'tea' }, { index: false });
    await client.store.putItem(['docs'], 'titled', { text: 'coffee', title: 'tea' }, { index: ['title'] });
    const found = await client.store.searchItems(['docs'], { query: 'tea' });
    // Scored items first; the unindexed one follows without a score (omitted, as LangGraph's JS server sends it).
    expect(keysOf(found)).toEqual(expect.arrayContaining(['indexed', 'titled', 'skipped']));
    expect(keysOf(found).at(-1)).toBe('skipped');
    expect(found.items.at(-1)?.score).toBeUndefined();
    expect(found.items.slice(0, 2).every((i) => (i.score ?? 0) > 0.99)).toBe(true);
    // Re-put without `index: false`: now indexed.
    await client.store.putItem(['docs'], 'skipped', { text: 'coffee' });
    expect(keysOf(await client.store.searchItems(['docs'], { query: 'coffee', limit: 1 }))).toEqual(['skipped']);
  });

  it("embeds a graph's puts on the worker with the same function", async () => {
    const client = s.client(KEYS.acme);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'memory', { input: { user: 'ann', note: 'likes tea' } });
    await client.runs.wait(thread.thread_id, 'memory', { input: { user: 'ann', note: 'hates coffee' } });
    const found = await client.store.searchItems(['notes', 'ann'], { query: 'coffee' });
    expect(keysOf(found)).toEqual(['hates coffee', 'likes tea']);
    expect(found.items[0]?.score).toBeGreaterThan(0.5);
  });

  it('refuses a bad put or search and writes nothing', async () => {
    const send = (method: string, route: string, body: unknown) =>
      fetch(`${s.url}${route}`, { method, headers: { 'x-api-key': KEYS.acme, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    for (const [body, field] of [
      [{ namespace: ['bad'], key: 'k', value: { text: 'x' }, index: 'text' }, 'index'],
      [{ namespace: ['bad'], key: 'k', value: { text: 'x' }, index: [] }, 'index'],
      [{ namespace: ['bad'], key: 'k', value: { text: 'x' }, ttl: 0 }, 'ttl'],
      [{ namespace: ['bad'], key: 'k', value: { text: 'x' }, ttl: 'soon' }, 'ttl'],
    ] as const) {
      const res = await send('PUT', '/store/items', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(await res.json())).toContain(field);
    }
    const search = await send('POST', '/store/items/search', { namespace_prefix: ['bad'], query: 42 });
    expect(search.status).toBe(400);
    expect(await s.client(KEYS.acme).store.getItem(['bad'], 'k')).toBeNull();
  });
});

describe('ttl', () => {
  it('hides an item once its ttl passed, and the sweep deletes it', async () => {
    const client = s.client(KEYS.acme);
    await client.store.putItem(['ttl', 'a'], 'short', { text: 'cats' }, { ttl: 0.02 });
    await client.store.putItem(['ttl', 'a'], 'forever', { text: 'cats' });
    expect((await client.store.getItem(['ttl', 'a'], 'short'))?.value).toEqual({ text: 'cats' });
    await sleep(1_500);
    expect(await client.store.getItem(['ttl', 'a'], 'short')).toBeNull();
    expect(keysOf(await client.store.searchItems(['ttl', 'a']))).toEqual(['forever']);
    expect(keysOf(await client.store.searchItems(['ttl', 'a'], { query: 'cats' }))).toEqual(['forever']);
    expect((await client.store.listNamespaces({ prefix: ['ttl'] })).namespaces).toEqual([['ttl', 'a']]);
    const store = new LedgerStore(s.db.ledger.pool, { tenant: 'acme' });
    expect(await store.sweepExpired()).toBeGreaterThanOrEqual(1);
    expect(await store.sweepExpired()).toBe(0);
    expect((await client.store.getItem(['ttl', 'a'], 'forever'))?.value).toEqual({ text: 'cats' });
    // A put after expiry starts a new item.
    await client.store.putItem(['ttl', 'a'], 'short', { text: 'dogs' });
    expect((await client.store.getItem(['ttl', 'a'], 'short'))?.value).toEqual({ text: 'dogs' });
  });

  it('refreshes on read (store.ttl.refresh_on_read) unless the read says refreshTtl: false', async () => {
    const client = s.client(KEYS.acme);
    for (const key of ['read', 'unread', 'searched']) await client.store.putItem(['ttl', 'b'], key, { text: key }, { ttl: 0.05 });
    await sleep(2_000);
    expect(await client.store.getItem(['ttl', 'b'], 'read')).not.toBeNull();
    expect(await client.store.getItem(['ttl', 'b'], 'unread', { refreshTtl: false })).not.toBeNull();
    expect(keysOf(await client.store.searchItems(['ttl', 'b'], { filter: { text: 'searched' } }))).toEqual(['searched']);
    await sleep(2_000);
    // 4 s after the puts (ttl 3 s): refreshed at 2 s, the read ones live until 5 s.
    expect(await client.store.getItem(['ttl', 'b'], 'unread', { refreshTtl: false })).toBeNull();
    expect(await client.store.getItem(['ttl', 'b'], 'read', { refreshTtl: false })).not.toBeNull();
    expect(keysOf(await client.store.searchItems(['ttl', 'b'], { refreshTtl: false })).sort()).toEqual(['read', 'searched']);
  });

  it("gives a put without its own ttl the config's default_ttl", async () => {
    const store = new LedgerStore(s.db.ledger.pool, { tenant: 'acme', ttl: { defaultMinutes: 0.02, refreshOnRead: false } });
    await store.put(['ttl', 'c'], 'defaulted', { text: 'x' });
    await store.putItem({ namespace: ['ttl', 'c'], key: 'kept', value: { text: 'x' }, ttl: null });
    expect(await store.get(['ttl', 'c'], 'defaulted')).not.toBeNull();
    await sleep(1_500);
    expect(await store.get(['ttl', 'c'], 'defaulted')).toBeNull();
    expect(await store.get(['ttl', 'c'], 'kept')).not.toBeNull();
  });
});

describe('pgvector', () => {
  it('is detected from pg_available_extensions', async () => {
    const offered = (await s.db.ledger.pool.query("SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'vector'")).rows[0].n > 0;
    expect(await new LedgerStore(s.db.ledger.pool, { tenant: 'acme' }).pgvectorAvailable()).toBe(offered);
  });
});
