// Loading langgraph.json's `auth.path`: an Auth object by file and export, and one readable line
// (never a server that lets everyone in) for a file, export or object that cannot be used.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { loadCustomAuth } from '../src/index';

function config(auth: unknown, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'runledger-auth-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  writeFileSync(path.join(dir, 'langgraph.json'), JSON.stringify({ graphs: {}, ...(auth === undefined ? {} : { auth }) }));
  return path.join(dir, 'langgraph.json');
}

const AUTH = `import { Auth } from '@langchain/langgraph-sdk/auth';
export const auth = new Auth().authenticate(async () => 'someone');
export const noAuthenticate = new Auth().on('*', () => true);
export const notAuth = { authenticate() {} };`;

it('loads the Auth object auth.path names, and nothing without auth.path', async () => {
  const loaded = await loadCustomAuth(config({ path: './auth.mjs:auth' }, { 'auth.mjs': AUTH }));
  expect(typeof loaded?.['~handlerCache'].authenticate).toBe('function');
  expect(await loadCustomAuth(config(undefined))).toBeUndefined();
  expect(await loadCustomAuth(undefined)).toBeUndefined();
});

it('refuses a missing file, a missing export, another object and an Auth without authenticate', async () => {
  await expect(loadCustomAuth(config({ path: './nope.mjs:auth' }))).rejects.toThrow(/auth.path \(\.\/nope\.mjs:auth\): file .* does not exist/);
  await expect(loadCustomAuth(config({ path: './auth.mjs:other' }, { 'auth.mjs': AUTH }))).rejects.toThrow('has no export "other"');
  await expect(loadCustomAuth(config({ path: './auth.mjs:notAuth' }, { 'auth.mjs': AUTH }))).rejects.toThrow('is not an Auth object');
  await expect(loadCustomAuth(config({ path: './auth.mjs:noAuthenticate' }, { 'auth.mjs': AUTH }))).rejects.toThrow('has no authenticate');
  await expect(loadCustomAuth(config({ path: '' }))).rejects.toThrow('auth.path');
});
