// A run's config and context reach its graph, through the official SDK and POST /v1/jobs:
// configurable (user_id, a model name), tags, recursion_limit and Runtime.context, merged over
// the graph's LANGGRAPH_CONFIG entry, the same after a worker SIGKILL and recovery; keys
// Runledger keeps for itself answer 422. A looping graph fails at once at LangGraph's default
// recursion limit, and an input no attempt can take fails its job without another attempt and
// without its content in the worker's log.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { langGraphThreadId } from '@runledger/ledger';
import { loadGraphs, parseGraphConfigDefaults } from '@runledger/runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitForEvent, waitForStatus } from '../../../test/support/stack';
import { KEYS, type LangGraphStack, SDKS, startLangGraphStack } from './langgraph-stack';

const fixture = path.join(import.meta.dirname, '../../worker/test/fixtures/config-graphs.ts');
// As LangGraph's server reads LANGGRAPH_CONFIG (its test fixtures set one like it in langgraph.json).
const graphConfig = parseGraphConfigDefaults(
  JSON.stringify({ configured: { configurable: { model_name: 'default-model', user_id: 'default-user' }, context: { model: 'default', team: 'core' } } }),
);

const checkpointsOf = async (s: LangGraphStack, threadId: string) =>
  Number((await s.db.ledger.pool.query('SELECT count(*) FROM checkpoints WHERE thread_id = $1', [langGraphThreadId('acme', threadId)])).rows[0].count);
const claimsOf = async (s: LangGraphStack, jobId: string) => (await s.db.ledger.events(jobId)).filter((e) => e.type === 'claimed').length;

describe('run config and context', { timeout: 120_000 }, () => {
  let s: LangGraphStack;
  let failed = false;
  beforeAll(async () => {
    s = await startLangGraphStack('lg_run_config', { graphs: await loadGraphs({ modulePath: fixture }), graphConfig });
  });
  // Each test starts its own workers: none of one test may run the next test's jobs.
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') failed = true;
    await s.procs.cleanup(ctx);
  });
  afterAll(() => s?.close(failed));

  it.each(SDKS)('SDK %s: the graph sees the run config over LANGGRAPH_CONFIG, also after a SIGKILL and recovery', async (sdk) => {
    const first = s.worker(`cfg-a-${sdk}`, { RUNLEDGER_GRAPHS: fixture });
    const client = s.client(undefined, sdk);
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'configured', {
      input: { sleepMs: 60_000 },
      config: { configurable: { user_id: 'u-42', thread_id: 'not-mine' }, tags: ['team-a'], recursion_limit: 7 },
      context: { model: 'large' },
      metadata: { source: 'run-metadata' },
    });
    await waitForEvent(s.db.ledger, run.run_id, 'first entered', (e) => e.type === 'node_entered' && e.detail.node === 'first', 60_000);
    first.kill('SIGKILL');
    await first.exited;
    s.worker(`cfg-b-${sdk}`, { RUNLEDGER_GRAPHS: fixture });
    const job = await waitForStatus(s.db.ledger, run.run_id, ['completed', 'failed'], 60_000);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    const expected = {
      userId: 'u-42',
      modelName: 'default-model',
      tags: ['team-a'],
      recursionLimit: 7,
      context: { model: 'large', team: 'core' },
      metadataSource: 'run-metadata',
      // The run's own thread, whatever the client put in configurable; Runledger's context is its own.
      threadId: langGraphThreadId('acme', thread.thread_id),
      runledgerIsOurs: true,
    };
    // Attempt 1 died in `first`; attempt 2 ran it again and then `read`, with the same config.
    const state = await client.threads.getState<{ seen: unknown[] }>(thread.thread_id);
    expect(state.values.seen).toEqual([
      { attempt: 2, ...expected },
      { attempt: 2, ...expected },
    ]);
    const [listed] = await client.runs.list(thread.thread_id);
    // The SDK's Run type leaves kwargs out; the server sends it (LangGraph's does too).
    expect((listed as { kwargs?: unknown } | undefined)?.kwargs).toMatchObject({
      config: { configurable: { user_id: 'u-42', model_name: 'default-model' }, tags: ['team-a'] },
      context: { model: 'large' },
    });
  });

  it("a stored assistant's config and context sit between LANGGRAPH_CONFIG's and the run's; its default assistant shows LANGGRAPH_CONFIG's", async () => {
    s.worker('cfg-assistant', { RUNLEDGER_GRAPHS: fixture });
    const client = s.client();
    const [system] = await client.assistants.search({ graphId: 'configured', metadata: { created_by: 'system' } });
    expect(system?.config).toMatchObject({ configurable: { model_name: 'default-model' } });
    const assistant = await client.assistants.create({
      graphId: 'configured',
      config: { configurable: { model_name: 'assistant-model', user_id: 'assistant-user' }, tags: ['assistant'] },
      context: { model: 'small' },
    });
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, assistant.assistant_id, { input: {}, config: { configurable: { user_id: 'run-user' } } });
    const state = await client.threads.getState<{ seen: Array<Record<string, unknown>> }>(thread.thread_id);
    expect(state.values.seen.at(-1)).toMatchObject({
      userId: 'run-user',
      modelName: 'assistant-model',
      tags: ['assistant'],
      context: { model: 'small', team: 'core' },
    });
  });

  it('POST /v1/jobs takes config and context; the defaults apply without them', async () => {
    s.worker('cfg-v1', { RUNLEDGER_GRAPHS: fixture });
    const post = (body: Record<string, unknown>) =>
      s.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        headers: { authorization: `Bearer ${KEYS.acme}` },
        payload: { graph: 'configured', input: {}, ...body },
      });
    const withConfig = await post({ config: { configurable: { user_id: 'v1-user' }, tags: ['v1'] }, context: { model: 'small' } });
    const plain = await post({});
    expect(withConfig.statusCode, withConfig.body).toBe(202);
    const a = await waitForStatus(s.db.ledger, withConfig.json().jobId, ['completed', 'failed']);
    const b = await waitForStatus(s.db.ledger, plain.json().jobId, ['completed', 'failed']);
    expect((a.result as { seen: unknown[] }).seen[1]).toMatchObject({
      userId: 'v1-user',
      modelName: 'default-model',
      tags: ['v1'],
      recursionLimit: 25,
      context: { model: 'small', team: 'core' },
    });
    expect((b.result as { seen: unknown[] }).seen[1]).toMatchObject({ userId: 'default-user', tags: [], context: { model: 'default', team: 'core' } });
  });

  it('answers 422 naming a key Runledger keeps or cannot honour, and admits nothing', async () => {
    const client = s.client();
    const before = (await s.db.ledger.list({ limit: 500 })).jobs.length;
    const refused: Array<[Record<string, unknown>, RegExp]> = [
      [{ configurable: { runledger: { fencingToken: 99 } } }, /config\.configurable\.runledger is reserved/],
      [{ configurable: { __pregel_send: 1 } }, /config\.configurable\.__pregel_send is reserved/],
      [{ configurable: { checkpoint_id: '1ef' } }, /config\.configurable\.checkpoint_id/],
      [{ callbacks: [] }, /config\.callbacks is not supported/],
      [{ recursion_limit: 0 }, /config\.recursion_limit must be an integer of at least 1/],
    ];
    for (const [config, message] of refused) {
      const asSdk = new RegExp(`HTTP 422: .*${message.source}`);
      await expect(client.runs.wait(null, 'configured', { input: {}, config: config as never })).rejects.toThrow(asSdk);
      const v1 = await s.app.inject({
        method: 'POST',
        url: '/v1/jobs',
        headers: { authorization: `Bearer ${KEYS.acme}` },
        payload: { graph: 'configured', input: {}, config },
      });
      expect(v1.statusCode).toBe(422);
      expect(v1.json().error).toMatchObject({ code: 'invalid_config', message: expect.stringMatching(message) });
    }
    expect((await s.db.ledger.list({ limit: 500 })).jobs.length).toBe(before);
  });

  it('a looping graph fails at once at the default recursion limit (25), or at the run’s, with a bounded number of checkpoints', async () => {
    s.worker('cfg-loop', { RUNLEDGER_GRAPHS: fixture });
    const client = s.client();
    for (const [limit, most] of [
      [undefined, 25],
      [5, 5],
    ] as const) {
      const thread = await client.threads.create();
      const started = Date.now();
      await expect(
        client.runs.wait(thread.thread_id, 'looping', { input: { n: 0 }, ...(limit ? { config: { recursion_limit: limit } } : {}) }),
      ).rejects.toThrow(/GraphRecursionError: Recursion limit of \d+ reached.*config\.recursion_limit/);
      expect(Date.now() - started).toBeLessThan(15_000);
      const [run] = await client.runs.list(thread.thread_id);
      const job = await s.db.ledger.get(run?.run_id as string);
      expect(job).toMatchObject({ status: 'failed', attempt: 1, error: { name: 'GraphRecursionError', deterministic: 'recursion_limit' } });
      expect(await checkpointsOf(s, thread.thread_id)).toBeLessThanOrEqual(most + 2);
      expect((await client.threads.get(thread.thread_id)).status).toBe('error');
    }
  });

  it('an input no attempt can take fails its job on the first attempt, its content not logged', async () => {
    const worker = s.worker('cfg-input', { RUNLEDGER_GRAPHS: fixture });
    const secret = `SECRET-${randomUUID()}`;
    const cases = [
      { graph: 'messages', input: { messages: [{ role: 'wizard', content: secret }] }, deterministic: 'invalid_message' },
      { graph: 'typed', input: { count: secret }, deterministic: 'invalid_input' },
      { graph: 'configured', input: {}, context: { model: secret }, deterministic: 'invalid_input' },
    ];
    for (const { deterministic, ...payload } of cases) {
      const res = await s.app.inject({ method: 'POST', url: '/v1/jobs', headers: { authorization: `Bearer ${KEYS.acme}` }, payload });
      expect(res.statusCode, res.body).toBe(202);
      const job = await waitForStatus(s.db.ledger, res.json().jobId, ['completed', 'failed']);
      expect(job, payload.graph).toMatchObject({ status: 'failed', attempt: 1, maxAttempts: 3, error: { deterministic } });
      // No retry is pending: one claim, and none follows.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await claimsOf(s, job.jobId)).toBe(1);
    }
    expect(worker.output()).toContain('attempt failed with an error no retry can fix');
    expect(worker.output()).not.toContain(secret);
  });
});
