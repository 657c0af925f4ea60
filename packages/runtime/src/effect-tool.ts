import type { ToolRunnableConfig } from '@langchain/core/tools';
import { runContext } from './context';
import { effect, type Reconciliation, toolEffectKey } from './effect';

export interface ToolEffectOptions<T> {
  /** The effect's name in the ledger (usually the tool's name). */
  name: string;
  /** The provider deduplicates on the idempotency key, so a call in doubt may be made again. Default false. */
  idempotent?: boolean;
  /** Asks the provider what became of an earlier call with this idempotency key. */
  reconcile?: (idempotencyKey: string) => Promise<Reconciliation<T>>;
}

/**
 * Makes a LangChain tool's body an effect: `tool(toolEffect({ name }, async (args, key) => …), { name, schema })`.
 * The body runs through `effect()` under the key of the model's tool call (thread + `tool_call_id`),
 * so across crashes, retries and replays it reaches the provider at most once as far as the
 * provider allows, and a committed call answers with its stored result. `idempotencyKey` is the
 * one to hand the provider. Throws when the tool is invoked without a tool call (a bare
 * `tool.invoke(args)` has no stable key) or outside a Runledger worker, and whatever `effect()` throws.
 */
export function toolEffect<A, T>(
  options: ToolEffectOptions<T>,
  body: (args: A, idempotencyKey: string, config: ToolRunnableConfig) => Promise<T>,
): (args: A, config: ToolRunnableConfig) => Promise<T> {
  return async (args, config) => {
    const ctx = runContext(config);
    const toolCallId = config.toolCall?.id;
    if (!toolCallId) throw new Error(`${options.name} must be invoked with the model's tool call (ToolNode does so), which carries its tool_call_id.`);
    const spec = { key: toolEffectKey(ctx, toolCallId), name: options.name, idempotent: options.idempotent, reconcile: options.reconcile };
    return effect(ctx, spec, (idempotencyKey) => body(args, idempotencyKey, config));
  };
}
