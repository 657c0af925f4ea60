// langgraph.json's `store`: the embed function loaded from a module (a function or a LangChain
// Embeddings), ttls in minutes with LangGraph's defaults, and one readable line for what cannot be used.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { loadStoreConfig } from '../src/index';

function config(store: unknown, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'runledger-store-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  writeFileSync(path.join(dir, 'langgraph.json'), JSON.stringify({ graphs: {}, store }));
  return path.join(dir, 'langgraph.json');
}

it('loads an exported function or Embeddings object, and ttls with their defaults', async () => {
  const fn = await loadStoreConfig(
    config(
      { index: { embed: './e.mjs:embed', dims: 2 }, ttl: { default_ttl: 5 } },
      { 'e.mjs': 'export const embed = async (t) => t.map((x) => [x.length, 1]);' },
    ),
  );
  expect(await fn?.index?.embed(['abc'])).toEqual([[3, 1]]);
  expect(fn?.ttl).toEqual({ refreshOnRead: true, defaultMinutes: 5, sweepIntervalMinutes: 60 });
  const obj = await loadStoreConfig(
    config({ index: { embed: './e.mjs', dims: 1, fields: ['text'] } }, { 'e.mjs': 'export default { embedDocuments: async (t) => t.map(() => [7]) };' }),
  );
  expect(await obj?.index?.embed(['x'])).toEqual([[7]]);
  expect(obj?.index?.fields).toEqual(['text']);
  expect(await loadStoreConfig(config(undefined))).toBeUndefined();
});

it('refuses what it cannot use, naming it', async () => {
  await expect(loadStoreConfig(config({ index: { embed: './missing.mjs:embed', dims: 2 } }))).rejects.toThrow(/store.index.embed .*does not exist/);
  await expect(loadStoreConfig(config({ index: { embed: './e.mjs:nope', dims: 2 } }, { 'e.mjs': 'export const embed = 1;' }))).rejects.toThrow(
    /no export "nope"/,
  );
  await expect(loadStoreConfig(config({ index: { embed: './e.mjs:embed', dims: 2 } }, { 'e.mjs': 'export const embed = 1;' }))).rejects.toThrow(
    /must export a function/,
  );
  await expect(loadStoreConfig(config({ index: { embed: './e.mjs:embed', dims: 0 } }))).rejects.toThrow(/store.index.dims/);
  await expect(loadStoreConfig(config({ index: { embed: 'cohere:embed-v3', dims: 2 } }))).rejects.toThrow(/provider "cohere" is not supported/);
  await expect(loadStoreConfig(config({ ttl: { default_ttl: -1 } }))).rejects.toThrow(/store.ttl.default_ttl/);
});
