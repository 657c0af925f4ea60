// Reading a LangGraph CLI config: entries in both forms, default exports, `env` as an object or
// a .env file, and one readable line for a config that cannot be used.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { applyProjectEnv, findLangGraphConfig, readLangGraphConfig } from '../src/index';

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'runledger-config-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

it('reads path:export entries, object entries and default exports, relative to the config', () => {
  const dir = project({
    'langgraph.json': JSON.stringify({
      graphs: { agent: './src/agent.ts:graph', plain: './src/plain.js', described: { path: 'src/x.ts:make', description: 'made per run' } },
      env: { A: '1' },
      dependencies: ['.'],
    }),
  });
  const config = readLangGraphConfig(path.join(dir, 'langgraph.json'));
  expect(config.graphs).toEqual([
    { id: 'agent', spec: './src/agent.ts:graph', file: path.join(dir, 'src/agent.ts'), exportName: 'graph', description: undefined },
    { id: 'plain', spec: './src/plain.js', file: path.join(dir, 'src/plain.js'), exportName: 'default', description: undefined },
    { id: 'described', spec: 'src/x.ts:make', file: path.join(dir, 'src/x.ts'), exportName: 'make', description: 'made per run' },
  ]);
  expect(config.env).toEqual({ A: '1' });
});

it('reads env from a .env file; variables already set win over it', () => {
  const dir = project({ 'langgraph.json': JSON.stringify({ graphs: {}, env: '.env.local' }), '.env.local': 'A=from-file\nB="quoted value"\n' });
  const { env } = readLangGraphConfig(path.join(dir, 'langgraph.json'));
  expect(env).toEqual({ A: 'from-file', B: 'quoted value' });
  const target: NodeJS.ProcessEnv = { A: 'already set', C: '' };
  applyProjectEnv({ ...env, C: 'filled' }, target);
  expect(target).toEqual({ A: 'already set', B: 'quoted value', C: 'filled' });
});

it('finds ./langgraph.json unless RUNLEDGER_CONFIG names one', () => {
  const dir = project({ 'langgraph.json': '{"graphs":{}}' });
  expect(findLangGraphConfig(undefined, dir)).toBe(path.join(dir, 'langgraph.json'));
  expect(findLangGraphConfig('other/lg.json', dir)).toBe(path.join(dir, 'other/lg.json'));
  expect(findLangGraphConfig(undefined, project({}))).toBeUndefined();
});

it('names the file and the problem in one line', () => {
  const bad = (text: string) => {
    const file = path.join(project({ 'langgraph.json': text }), 'langgraph.json');
    return () => readLangGraphConfig(file);
  };
  expect(bad('{ not json')).toThrow(/^langgraph config \/.*langgraph\.json cannot be read: .*JSON/);
  expect(bad('{"graphs":{"a b":"./x.ts"}}')).toThrow(/^langgraph config .*: graph id "a b" must be 1 to 100 letters/);
  expect(bad('{"graphs":{"a":"./x.ts"},"env":"missing.env"}')).toThrow(/env file .*missing\.env cannot be read: ENOENT/);
  expect(bad('{}')).toThrow(/graphs: /);
});
