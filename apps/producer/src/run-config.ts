import { isDeepStrictEqual } from 'node:util';
import { type ConfigLayer, type GraphConfigDefaults, mergeRunConfig, type RunConfig, runConfigProblem } from '@runledger/runtime';
import { ApiError } from './http-errors';

/** A job's config and context as stored with it (in its run request). */
export interface StoredRunConfig {
  config: RunConfig;
  context: unknown;
}

/**
 * The config and context to store with a new job of `graph`: LANGGRAPH_CONFIG's entry of the
 * graph < the assistant's < the run's (mergeRunConfig). Undefined when none sets anything.
 * Throws ApiError 422 `invalid_config` naming a field Runledger cannot honour; writes nothing.
 */
export function storedRunConfig(
  defaults: GraphConfigDefaults,
  graph: string,
  assistant: ConfigLayer | undefined,
  run: ConfigLayer,
): StoredRunConfig | undefined {
  const problem = runConfigProblem(run);
  if (problem) throw new ApiError(422, 'invalid_config', problem);
  const merged = mergeRunConfig(Object.hasOwn(defaults, graph) ? defaults[graph] : undefined, assistant, run);
  return Object.keys(merged.config).length === 0 && isDeepStrictEqual(merged.context, {}) ? undefined : merged;
}
