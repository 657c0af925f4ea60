// A mistyped command or flag: one well-formed line on stderr naming what was typed and the
// closest real command or flag, exit code 2, and no database needed to say so.
import { describe, expect, it } from 'vitest';
import { cliEnv, errorLine, runCli } from './cli-process';

describe('runledger suggestions for typos', { timeout: 120_000 }, () => {
  const env = cliEnv({});

  it.each([
    [['sbumit', 'echo'], 'runledger: unknown command "sbumit". Did you mean "submit"?'],
    [['jbos'], 'runledger: unknown command "jbos". Did you mean "jobs"?'],
    [['wroker'], 'runledger: unknown command "wroker". Did you mean "worker"?'],
    [['submit', 'echo', '--inptu', '{}'], 'runledger: submit: unknown option "--inptu". Did you mean "--input"?'],
    [['jobs', '--limt', '3'], 'runledger: jobs: unknown option "--limt". Did you mean "--limit"?'],
    [['resume', 'x', '--vaule=1'], 'runledger: resume: unknown option "--vaule". Did you mean "--value"?'],
  ])('runledger %j', async (args, expected) => {
    const run = await runCli(args, env);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(errorLine(run)).toBe(expected);
  });

  it('nothing close: points at --help instead of guessing', async () => {
    const command = await runCli(['frobnicate'], env);
    expect(command.code).toBe(2);
    expect(errorLine(command)).toBe('runledger: unknown command "frobnicate". Run `npx runledger --help` for the list.');

    const flag = await runCli(['jobs', '--frobnicate'], env);
    expect(flag.code).toBe(2);
    expect(errorLine(flag)).toBe('runledger: jobs: unknown option "--frobnicate". Run `npx runledger jobs --help` for its options.');
  });
});
