// Runs the `runledger` command from its TypeScript sources as a real process (node with tsx and the
// "source" condition, so no build is needed and none goes stale); test/pack.int.test.ts runs the built bin.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../../..');
const main = path.join(root, 'apps/cli/src/main.ts');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** An empty RUNLEDGER_HOME, so no running `npm start` of the developer is picked up. */
export const emptyHome = () => mkdtempSync(path.join(tmpdir(), 'runledger-cli-'));

/**
 * The CLI's environment for a test schema: only the variables given here reach it (plus PATH),
 * so nothing from the developer's shell leaks in.
 */
export function cliEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', RUNLEDGER_HOME: emptyHome(), ...vars };
}

/** Runs `runledger ...args` to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@runledger/source', '--import', 'tsx', main, ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`runledger ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Asserts the shape of a CLI failure: exactly one line on stderr, no stack frame. */
export function errorLine(run: CliRun): string {
  const lines = run.stderr.trimEnd().split('\n');
  if (lines.length !== 1 || /^\s+at /m.test(run.stderr)) throw new Error(`expected one error line, got:\n${run.stderr}`);
  return lines[0] as string;
}
