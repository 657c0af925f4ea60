// `runledger dev` in a team's project reloads its graphs when a graph file changes, as
// `langgraph dev` does: a line names the file, workers and producer restart, and a job submitted
// afterwards runs the new code.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@runledger/ledger';
import { afterAll, expect, inject, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { keepOutput, type Proc } from '../../../test/support/stack';
import '../../../test/support/provided';

const repo = path.resolve(import.meta.dirname, '../../..');
const project = mkdtempSync(path.join(tmpdir(), 'runledger-reload-'));
const graphFile = path.join(project, 'src', 'graph.ts');
const graphSource = (said: string) => `import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
const State = Annotation.Root({ said: Annotation<string | undefined> });
export const graph = new StateGraph(State).addNode('say', () => ({ said: '${said}' })).addEdge(START, 'say').addEdge('say', END);
`;

let dev: Proc | undefined;
afterAll(async () => {
  if (dev && dev.child.exitCode === null) {
    dev.kill('SIGINT');
    await dev.exited;
  }
  rmSync(project, { recursive: true, force: true });
});

it('a changed graph file reloads the graphs: the next job runs the new code', { timeout: 300_000 }, async () => {
  // The project's dependencies are the repository's (LangGraph itself).
  symlinkSync(path.join(repo, 'node_modules'), path.join(project, 'node_modules'));
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'reload-project', version: '1.0.0', type: 'module' }));
  writeFileSync(path.join(project, 'langgraph.json'), JSON.stringify({ graphs: { hello: './src/graph.ts:graph' } }));
  mkdirSync(path.dirname(graphFile));
  writeFileSync(graphFile, graphSource('v1'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NO_COLOR: '1',
    DATABASE_URL: inject('databaseUrl'),
    DB_SCHEMA: `t_dev_reload_${Date.now()}`,
    QUEUE_BACKEND: 'postgres',
    PORT: String(port),
    RUNLEDGER_HOME: path.join(project, '.runledger'),
  };
  dev = keepOutput(
    spawn(process.execPath, ['--conditions=@runledger/source', '--import', 'tsx', path.join(repo, 'apps/cli/src/main.ts'), 'dev'], {
      cwd: project,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const started = dev;
  await waitFor(
    'runledger dev to serve the project',
    async () => started.output().includes('Ctrl-C stops everything') || started.child.exitCode !== null,
    180_000,
    200,
  );
  expect(started.output()).toContain('your graphs from langgraph.json: hello');

  const base = `http://127.0.0.1:${port}`;
  const run = async () => {
    const res = await fetch(`${base}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ graph: 'hello', input: {} }),
    });
    expect(res.status).toBe(202);
    const { jobId } = (await res.json()) as { jobId: string };
    const job = await waitFor(
      'the job to finish',
      async () => {
        const j = (await (await fetch(`${base}/v1/jobs/${jobId}`)).json()) as { status: string; result: { said?: string } | null };
        return ['completed', 'failed'].includes(j.status) ? j : undefined;
      },
      60_000,
      200,
    );
    return job.result?.said;
  };
  expect(await run()).toBe('v1');

  writeFileSync(graphFile, graphSource('v2'));
  await waitFor('the reload', async () => started.output().includes('✓ reloaded') || started.child.exitCode !== null, 120_000, 200);
  expect(started.output()).toContain(`${path.join('src', 'graph.ts')} changed: reloading the graphs`);
  expect(await run()).toBe('v2');
});
