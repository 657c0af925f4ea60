// `runledger upgrade` as a real process against a real migrated schema, with no worker running:
// worker announcements are written as a worker writes them (registerWorker), and the parked job's
// checkpoints by the real approval graph on the schema's checkpoint tables. A job waiting for v1
// moves to v2 (its timeline records it); an unknown graph, the same version, and an incompatible
// version without --replay exit non-zero with a clear message and change nothing.
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { langGraphThreadId, registerWorker, retireWorker } from '@runledger/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGraphs } from '../../../packages/runtime/src/index';
import { type TestDb, testDb } from '../../../test/support/db';
import { cliEnv, errorLine, runCli } from './cli-process';

describe('runledger upgrade (real CLI process)', { timeout: 120_000 }, () => {
  let db: TestDb;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    db = await testDb('cli_upgrade');
    env = cliEnv({ DATABASE_URL: db.url, DB_SCHEMA: db.schema, QUEUE_BACKEND: 'postgres' });
    // v2 workers of both graphs were started (and have gone): v2 of echo resumes v1, v2 of approval resumes nothing.
    await registerWorker(db.ledger.pool, 'w-v2', {
      serves: ['echo@v2', 'approval@v2'],
      versions: { echo: 'v2', approval: 'v2' },
      resumes: { echo: ['v1'] },
      concurrency: {},
    });
    await retireWorker(db.ledger.pool, 'w-v2');
  });
  afterAll(() => db?.close());

  /** Every job row and event of the schema: what a refused command must leave as it was. */
  const everything = async () => {
    const jobs = await db.ledger.pool.query('SELECT * FROM jobs ORDER BY seq');
    const events = await db.ledger.pool.query('SELECT * FROM job_events ORDER BY event_id');
    return { jobs: jobs.rows, events: events.rows };
  };

  /** An approval job of v1 parked at its question, with the checkpoints the real graph wrote. */
  async function parkedApproval(): Promise<string> {
    const { job } = await db.ledger.admit({ graph: 'approval', graphVersion: 'v1', input: { request: 'a boat' } });
    const claim = await db.ledger.claim(job.jobId, 'setup-worker');
    if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
    const saver = new PostgresSaver(db.ledger.pool, undefined, { schema: db.schema });
    const graph = (await loadGraphs()).get('approval')!.build(saver);
    const config = { configurable: { thread_id: langGraphThreadId(job.tenant, job.threadId) } };
    await graph.invoke(job.input, config);
    const interrupts = (await graph.getState(config)).tasks.flatMap((t) => t.interrupts.map((i) => i.value));
    expect(interrupts).toHaveLength(1);
    await db.ledger.park(job.jobId, claim.job.fencingToken, interrupts);
    return job.jobId;
  }

  it('moves a job waiting for v1 to v2, delivers it and records `upgraded` in its timeline', async () => {
    const { job } = await db.ledger.admit({ graph: 'echo', graphVersion: 'v1', input: {} });
    expect((await db.ledger.get(job.jobId)).versionServed).toBe(false);

    const run = await runCli(['upgrade', '--graph', 'echo', '--from', 'v1', '--to', 'v2', '--note', 'release 7'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n')).toEqual(['echo: v1 → v2 (v2 resumes v1; no live worker serves it yet)', `  ${job.jobId} moved: accepted`, '']);
    const moved = await db.ledger.get(job.jobId);
    expect([moved.status, moved.graphVersion, moved.attempt]).toEqual(['accepted', 'v2', 0]);
    expect(moved.deliveries).toBeGreaterThanOrEqual(1);
    const events = await db.ledger.events(job.jobId);
    expect(events.filter((e) => e.type === 'upgraded').map((e) => e.detail)).toEqual([{ from: 'v1', to: 'v2', replay: false, note: 'release 7' }]);
  });

  it('refuses an unknown graph and the same version with exit 2 and one line, changing nothing', async () => {
    await db.ledger.admit({ graph: 'echo', graphVersion: 'v1', input: { steps: 2 } });
    const before = await everything();

    const unknown = await runCli(['upgrade', '--graph', 'nope', '--from', 'v1', '--to', 'v2'], env);
    expect(unknown.code).toBe(2);
    expect(errorLine(unknown)).toBe('runledger: No worker has announced nope@v2; start workers serving it before moving jobs to it.');

    const same = await runCli(['upgrade', '--graph', 'echo', '--from', 'v1', '--to', 'v1'], env);
    expect(same.code).toBe(2);
    expect(errorLine(same)).toBe('runledger: Jobs of echo@v1 are on v1 already: give the version to move them to.');

    expect(await everything()).toEqual(before);
  });

  it('refuses a parked job whose checkpoints v2 cannot resume unless --replay, then replays it from its input', async () => {
    const jobId = await parkedApproval();
    const before = await everything();

    const refused = await runCli(['upgrade', '--graph', 'approval', '--from', 'v1', '--to', 'v2'], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('approval: v1 → v2 (not declared compatible; no live worker serves it yet)');
    expect(refused.stdout).toContain(
      `  ${jobId} refused: its checkpoints were written by approval@v1, which approval@v2 does not declare it can resume (resumes); add --replay to run it again from its stored input`,
    );
    expect(await everything()).toEqual(before);

    const replayed = await runCli(['upgrade', '--graph', 'approval', '--from', 'v1', '--to', 'v2', '--replay', '--json'], env);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toEqual({
      compatible: false,
      live: false,
      jobs: [{ jobId, status: 'accepted', moved: true, replayed: true, refused: null }],
    });
    const job = await db.ledger.get(jobId);
    expect([job.status, job.graphVersion, job.interrupt]).toEqual(['accepted', 'v2', null]);
    expect((await db.ledger.events(jobId)).find((e) => e.type === 'upgraded')?.detail).toMatchObject({ from: 'v1', to: 'v2', replay: true });
  });
});
