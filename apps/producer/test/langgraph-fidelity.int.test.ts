// Behaviours LangGraph's own server API tests (langgraphjs libs/langgraph-api/tests/api.test.mts)
// rely on, through the official SDK against a real producer and worker process: an input field
// the graph has no channel for is dropped, not refused (the /v1 API still refuses it); a graph
// factory builds the graph each run's config asks for, streams its updates and takes a state
// update as the thread's node; StateSchema and zod-registry states describe their fields with
// LangGraph's jsonSchemaExtra, and an Annotation state's (and its subgraphs') from its TypeScript
// types; an unknown assistant says so in LangGraph's words.
import path from 'node:path';
import { loadGraphs, parseGraphConfigDefaults } from '@runledger/runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, type LangGraphStack, startLangGraphStack } from './langgraph-stack';

const config = path.join(import.meta.dirname, 'fixtures/fidelity-project/langgraph.json');

let s: LangGraphStack;
let failed = false;
beforeAll(async () => {
  // The config's env (LANGGRAPH_CONFIG) goes to the producer as it would at its start-up.
  const env: NodeJS.ProcessEnv = {};
  const graphs = await loadGraphs({ configPath: config, env, notice: () => {} });
  s = await startLangGraphStack('lg_fidelity', { graphs, graphConfig: parseGraphConfigDefaults(env.LANGGRAPH_CONFIG) });
  s.worker('lg-fidelity-w1', { RUNLEDGER_CONFIG: config });
});
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') failed = true;
});
afterAll(() => s?.close(failed));

/** The node names of a run's `updates` events. */
async function updatedNodes(stream: AsyncIterable<{ event: string; data: unknown }>): Promise<string[]> {
  const nodes: string[] = [];
  for await (const chunk of stream) if (chunk.event === 'updates') nodes.push(...Object.keys(chunk.data as object));
  return nodes;
}

describe('LangGraph API fidelity', { timeout: 90_000 }, () => {
  it('drops input fields the graph has no channel for, as LangGraph does; /v1/jobs still refuses them', async () => {
    const client = s.client();
    const assistant = await client.assistants.create({ graphId: 'context_model', context: { model: 'anthropic' } });
    const thread = await client.threads.create();
    const input = { messages: [{ role: 'human', content: 'input' }] };
    expect(await client.runs.wait(thread.thread_id, assistant.assistant_id, { input, context: { model: 'openai' } })).toEqual({ model: 'openai' });
    expect(await client.runs.wait(null, assistant.assistant_id, { input })).toEqual({ model: 'anthropic' });
    expect(await client.runs.wait(null, 'context_model', { input })).toEqual({ model: 'from-env' });
    const v1 = await fetch(`${s.url}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEYS.acme },
      body: JSON.stringify({ graph: 'context_model', input }),
    });
    expect(v1.status).toBe(422);
    expect(((await v1.json()) as { error: { message: string } }).error.message).toContain('unknown field(s) messages');
  });

  it('a graph factory streams the graph its config asks for, and a state update is written as its node', async () => {
    const client = s.client();
    const input = { messages: ['input'] };
    expect(await updatedNodes(client.runs.stream(null, 'node_factory', { input, streamMode: ['updates'] }))).toEqual(['default']);
    const asked = { input, config: { configurable: { nodeName: 'runtime' } }, streamMode: ['updates' as const] };
    expect(await updatedNodes(client.runs.stream(null, 'node_factory', asked))).toEqual(['runtime']);

    const assistant = await client.assistants.create({ graphId: 'node_factory', config: { configurable: { nodeName: 'assistant' } } });
    const thread = await client.threads.create({ graphId: 'node_factory' });
    expect(await updatedNodes(client.runs.stream(thread.thread_id, assistant.assistant_id, { input, streamMode: ['updates'] }))).toEqual(['assistant']);
    // Only the graph the thread's runs had knows a node "assistant": the update builds that one.
    await client.threads.updateState(thread.thread_id, { values: { messages: 'update' }, asNode: 'assistant' });
    expect((await client.threads.getState(thread.thread_id)).values).toEqual({ messages: ['input', 'assistant', 'update'] });
  });

  it.each([
    ['state_schema', ['messages', 'count']],
    ['zod_registry', ['messages', 'count']],
  ])("%s: the state schema marks messages with LangGraph's jsonSchemaExtra", async (graphId, fields) => {
    const schemas = await s.client().assistants.getSchemas(graphId);
    const state = schemas.state_schema as { type: string; properties: Record<string, Record<string, unknown>> };
    expect(state.type).toBe('object');
    expect(Object.keys(state.properties)).toEqual(expect.arrayContaining(fields));
    expect(state.properties.messages).toMatchObject({ langgraph_type: 'messages' });
    expect(state.properties.count).toMatchObject({ type: 'number' });
    expect(schemas.input_schema).not.toBeNull();
  });

  it("an Annotation graph's schemas are typed from its TypeScript types, its subgraphs' too, as LangGraph's server reads them", async () => {
    const client = s.client();
    const schemas = await client.assistants.getSchemas('context_model');
    const model = { type: 'object', properties: { model: { type: 'string' } } };
    expect(schemas).toMatchObject({ config_schema: model, context_schema: model });
    expect(schemas.state_schema).toMatchObject({ type: 'object', properties: { message: { type: 'string' }, model: { type: 'string' } } });
    const subgraphs = await client.assistants.getSubgraphs('with_subgraph');
    expect(Object.keys(subgraphs)).toEqual(['inner']);
    expect(subgraphs.inner).toMatchObject({
      state: { type: 'object', properties: { city: { type: 'string' }, log: { type: 'array', items: { type: 'string' } } } },
    });
  });

  it("an unknown assistant answers 404 in LangGraph's words", async () => {
    const client = s.client();
    const thread = await client.threads.create();
    const err = await client.runs.wait(thread.thread_id, 'no-such-graph', { input: {} }).catch((e: Error & { status?: number }) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { status?: number }).status).toBe(404);
    expect(String((err as Error).message)).toMatch(/No assistant found for \\?"no-such-graph/);
  });
});
