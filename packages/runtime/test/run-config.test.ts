import { describe, expect, it } from 'vitest';
import { invokeOptionsOf, mergeRunConfig, parseGraphConfigDefaults, runConfigProblem } from '../src/index';

describe('mergeRunConfig: LANGGRAPH_CONFIG < assistant < run, as LangGraph’s server merges', () => {
  const defaults = {
    config: { configurable: { model_name: 'env', user_id: 'env-user' }, tags: ['env'], recursion_limit: 50, metadata: { from: 'env', env: 1 } },
    context: { model: 'env', team: 'core' },
  };
  const assistant = { config: { configurable: { model_name: 'assistant', prompt: 'be brief' }, tags: ['assistant'] }, context: { model: 'assistant' } };

  it('merges configurable, metadata and object contexts key by key; later tags and recursion_limit replace', () => {
    const run = { config: { configurable: { user_id: 'u-1' }, metadata: { from: 'run' } }, context: { locale: 'fr' } };
    expect(mergeRunConfig(defaults, assistant, run)).toEqual({
      config: {
        configurable: { model_name: 'assistant', user_id: 'u-1', prompt: 'be brief' },
        tags: ['assistant'],
        recursion_limit: 50,
        metadata: { from: 'run', env: 1 },
      },
      context: { model: 'assistant', team: 'core', locale: 'fr' },
    });
    expect(mergeRunConfig(defaults, assistant, { config: { tags: ['run'], recursion_limit: 5 } }).config).toMatchObject({ tags: ['run'], recursion_limit: 5 });
  });

  it('skips missing layers, and gives `{}` as the context when none sets one', () => {
    expect(mergeRunConfig(undefined, undefined, {})).toEqual({ config: {}, context: {} });
    expect(mergeRunConfig(undefined, undefined, { context: null })).toEqual({ config: {}, context: {} });
    expect(mergeRunConfig(defaults, undefined, {}).context).toEqual({ model: 'env', team: 'core' });
    expect(mergeRunConfig(undefined, assistant, { config: { configurable: { a: 1 } } }).config.configurable).toEqual({
      model_name: 'assistant',
      prompt: 'be brief',
      a: 1,
    });
  });

  it('a context that is not an object replaces the one before', () => {
    expect(mergeRunConfig(defaults, undefined, { context: 'plain' }).context).toBe('plain');
    expect(mergeRunConfig({ context: 'plain' }, undefined, { context: { a: 1 } }).context).toEqual({ a: 1 });
  });

  it('leaves its arguments as they were', () => {
    const before = JSON.stringify([defaults, assistant]);
    mergeRunConfig(defaults, assistant, { config: { configurable: { x: 1 } }, context: { y: 2 } });
    expect(JSON.stringify([defaults, assistant])).toBe(before);
  });
});

describe('runConfigProblem', () => {
  it.each([
    [{ configurable: { runledger: {} } }, "body.config.configurable.runledger is reserved for Runledger's run context (runContext)"],
    [{ configurable: { __pregel_scratchpad: {} } }, "body.config.configurable.__pregel_scratchpad is reserved for LangGraph's internal keys"],
    [{ configurable: { checkpoint_id: 'x' } }, 'body.config.configurable.checkpoint_id would run the graph from another checkpoint'],
    [{ configurable: { checkpoint_ns: 'x' } }, 'body.config.configurable.checkpoint_ns would run'],
    [{ callbacks: [] }, 'body.config.callbacks is not supported by Runledger'],
    [{ configurable: [] }, 'body.config.configurable must be an object'],
    [{ tags: ['a', 1] }, 'body.config.tags must be a list of strings'],
    [{ metadata: 'x' }, 'body.config.metadata must be an object'],
    [{ recursion_limit: 0 }, 'body.config.recursion_limit must be an integer of at least 1'],
    [{ recursion_limit: 2.5 }, 'body.config.recursion_limit must be an integer of at least 1'],
  ])('refuses %j', (config, message) => {
    expect(runConfigProblem({ config: config as never })).toContain(message);
  });

  it('accepts what LangGraph’s server passes on, thread_id included (the run’s own replaces it)', () => {
    const config = { configurable: { thread_id: 'x', user_id: 'u', model_name: 'm' }, tags: ['t'], metadata: { a: 1 }, recursion_limit: 3 };
    expect(runConfigProblem({ config, context: { anything: true } })).toBeUndefined();
    expect(runConfigProblem({})).toBeUndefined();
  });
});

describe('invokeOptionsOf', () => {
  it('names the options as LangGraph does and sets only what the run set', () => {
    expect(invokeOptionsOf(undefined)).toEqual({ configurable: {}, context: {} });
    expect(invokeOptionsOf({ config: { configurable: { a: 1 }, tags: ['t'], metadata: { m: 1 }, recursion_limit: 9 }, context: { c: 1 } })).toEqual({
      configurable: { a: 1 },
      context: { c: 1 },
      tags: ['t'],
      metadata: { m: 1 },
      recursionLimit: 9,
    });
  });
});

describe('parseGraphConfigDefaults (LANGGRAPH_CONFIG)', () => {
  it('reads graph id → config with its context, as LangGraph’s test fixtures set it', () => {
    const d = parseGraphConfigDefaults('{"agent": {"configurable": {"model_name": "openai"}}, "simple_runtime": {"context": {"model": "unknown"}}}');
    expect(d.agent).toEqual({ config: { configurable: { model_name: 'openai' } }, context: undefined });
    expect(d.simple_runtime).toEqual({ config: {}, context: { model: 'unknown' } });
    expect(parseGraphConfigDefaults(undefined)).toEqual({});
    expect(parseGraphConfigDefaults(' ')).toEqual({});
  });

  it('keeps a graph id such as __proto__ a plain key', () => {
    const d = parseGraphConfigDefaults('{"__proto__": {"recursion_limit": 3}}');
    expect(Object.hasOwn(d, '__proto__')).toBe(true);
    expect(Object.hasOwn(d, 'constructor')).toBe(false);
  });

  it.each([
    ['{', /LANGGRAPH_CONFIG is not valid JSON/],
    ['[]', /LANGGRAPH_CONFIG must be a JSON object/],
    ['{"agent": 1}', /LANGGRAPH_CONFIG\.agent must be an object/],
    ['{"agent": {"configurable": {"runledger": 1}}}', /LANGGRAPH_CONFIG\.agent\.configurable\.runledger is reserved/],
    ['{"agent": {"recursion_limit": "x"}}', /LANGGRAPH_CONFIG\.agent\.recursion_limit must be an integer/],
  ])('refuses %s naming the entry', (text, message) => {
    expect(() => parseGraphConfigDefaults(text)).toThrow(message);
  });
});
