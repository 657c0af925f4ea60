// The ledger's core entry (`@runledger/ledger/core`) is what the CLI imports so it starts fast:
// it must load no LangChain code. Each case starts a real Node process with a resolve hook that
// fails any module under @langchain/; the full entry, which does load LangChain, shows the hook
// catches it.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const hook = path.join(import.meta.dirname, 'support/forbid-langchain.mjs');

function load(entry: string) {
  const code = `const m = await import('${entry}'); console.log('exports', Object.keys(m).length);`;
  return spawnSync(process.execPath, ['--conditions=@runledger/source', '--import', 'tsx', '--import', hook, '--input-type=module', '-e', code], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('@runledger/ledger/core', () => {
  it('loads without resolving any @langchain module', () => {
    const r = load('@runledger/ledger/core');
    expect(r.stderr).not.toContain('LangChain loaded');
    expect(r.stdout).toMatch(/exports [1-9]\d*/);
    expect(r.status).toBe(0);
  });

  it('the full entry does load LangChain, and the hook says so', () => {
    const r = load('@runledger/ledger');
    expect(r.stderr).toContain('LangChain loaded: @langchain/');
    expect(r.status).not.toBe(0);
  });
});
