// A job whose graph no live worker serves (issue 43.2): with a worker serving only `echo`, a
// `vacation` job waits in the ledger without deliveries or claims for a minute, through a FLUSHALL
// of Redis, while the admission's answer, the API, the dashboard list, `runledger jobs` and
// `runledger doctor` say "no live worker serves vacation@1.0.0"; it completes once a worker
// serving vacation starts. Deliveries are counted from the ledger and the worker's /metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../apps/cli/test/cli-process';
import { freePort, listWorkers } from '../packages/ledger/src/index';
import { type OwnStack, ownStack, post, startProducer, startWorker } from './scheduling/own-stack';
import { sleep, waitFor } from './support/db';
import { queueConfigFor, stackEnv, waitForStatus } from './support/stack';

describe('a job no live worker serves', () => {
  let s: OwnStack;
  let env: NodeJS.ProcessEnv;
  let url: string;
  let cli: NodeJS.ProcessEnv;

  beforeAll(async () => {
    s = await ownStack('unserved', 7163);
    const q = queueConfigFor('redis', s.db.url, s.db.schema, s.redis.url);
    env = stackEnv(q, s.db.url, s.db.schema, { RUNLEDGER_BUILD_ID: '1.0.0', SWEEP_INTERVAL_MS: '500' });
    cli = cliEnv({ DATABASE_URL: s.db.url, DB_SCHEMA: s.db.schema, QUEUE_BACKEND: 'redis', REDIS_URL: s.redis.url, QUEUE_PREFIX: q.prefix ?? '' });
    url = (await startProducer(env, s.add)).url;
  }, 200_000);
  afterAll(() => s?.close());

  it('waits in the ledger with at most 2 deliveries over 60 s, says so everywhere, and runs once a worker serving it starts', async () => {
    const metricsPort = await freePort();
    await startWorker(env, 'echo-only', s.add, { RUNLEDGER_WORKER_GRAPHS: 'echo', METRICS_PORT: String(metricsPort) });
    await waitFor('the echo worker to announce itself', async () => (await listWorkers(s.db.ledger.pool)).some((w) => w.workerId === 'echo-only'));
    const echo = await post(`${url}/v1/jobs`, { graph: 'echo', input: { steps: 1 } });
    await waitForStatus(s.db.ledger, echo.body.jobId, ['completed']);

    const admitted = await post(`${url}/v1/jobs`, { graph: 'vacation', input: {} });
    const admittedAt = Date.now();
    expect(admitted.status).toBe(202);
    const jobId = admitted.body.jobId;
    expect((admitted.body as unknown as { warning?: string }).warning).toMatch(/^no live worker serves vacation@1\.0\.0: the job waits in the ledger/);
    expect(echo.body).not.toHaveProperty('warning');

    const api = (await (await fetch(`${url}/v1/jobs/${jobId}`)).json()) as { waitingFor: string };
    expect(api.waitingFor).toBe('no live worker serves vacation@1.0.0');
    const dashboard = await (await fetch(`${url}/admin`)).text();
    expect(dashboard).toContain('Jobs that cannot run now: no live worker serves vacation@1.0.0 (1 job waits)');
    const jobs = await runCli(['jobs'], cli);
    expect(jobs.code, jobs.stderr).toBe(0);
    expect(jobs.stdout).toContain('accepted, no live worker serves vacation@1.0.0');
    expect(jobs.stdout).toContain('Waiting: no live worker serves vacation@1.0.0 (1 job waits)');
    const doctor = await runCli(['doctor'], cli);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/✗ served\s+no live worker serves vacation@1\.0\.0 \(1 job waits\)/);
    expect(doctor.stdout).toContain('fix: start a worker serving vacation at 1.0.0');

    // A minute of waiting, with Redis losing every key halfway: the ledger alone keeps the job.
    await sleep(Math.max(0, admittedAt + 30_000 - Date.now()));
    await s.redis.flushAll();
    await sleep(Math.max(0, admittedAt + 60_000 - Date.now()));
    const waited = await s.db.ledger.get(jobId);
    expect([waited.status, waited.attempt]).toEqual(['accepted', 0]);
    expect(waited.deliveries).toBeLessThanOrEqual(2);
    const types = (await s.db.ledger.events(jobId)).map((e) => e.type);
    expect(types.filter((t) => t === 'claimed')).toHaveLength(0);
    expect(types.filter((t) => t === 'waiting_for_version')).toHaveLength(1);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const refused = Number(/runledger_claims_refused_total\{reason="not_served"\} (\d+)/.exec(metrics)?.[1] ?? 0);
    expect(refused).toBeGreaterThanOrEqual(1);
    expect(refused).toBeLessThanOrEqual(2);

    await startWorker(env, 'vacation-pool', s.add, { RUNLEDGER_WORKER_GRAPHS: 'vacation' });
    expect((await waitForStatus(s.db.ledger, jobId, ['completed', 'failed'], 60_000)).status).toBe('completed');
    expect((await s.db.ledger.events(jobId)).filter((e) => e.type === 'claimed').map((e) => e.workerId)).toEqual(['vacation-pool']);
    expect((await runCli(['doctor'], cli)).stdout).toMatch(/✓ served\s+every job ready to run has a live worker/);
  }, 240_000);
});
