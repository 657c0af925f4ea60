import { Annotation, END, type LangGraphRunnableConfig, START, StateGraph } from '@langchain/langgraph';
import { z } from 'zod';
import { abortableSleep, runContext, traceNode } from '../context';
import type { GraphDefinition } from '../registry';
import { describeIssues } from './input';

const EchoInput = z
  .object({
    steps: z.number().int().min(1).max(1000).optional(),
    sleepMs: z.number().int().min(0).max(600_000).optional(),
    failTimes: z.number().int().min(0).max(100).optional(),
    traceNodes: z.boolean().optional(),
  })
  .strict();

const last = <T>() => Annotation<T>({ reducer: (_a, b) => b, default: () => undefined as T });

const State = Annotation.Root({
  steps: last<number | undefined>(),
  sleepMs: last<number | undefined>(),
  failTimes: last<number | undefined>(),
  traceNodes: last<boolean | undefined>(),
  done: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }),
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** One step: sleeps, fails on the first `failTimes` attempts, counts. Entered once per step. */
async function step(state: typeof State.State, config: LangGraphRunnableConfig) {
  const n = state.done + 1;
  await traceNode(config, `step${n}`, state.traceNodes === true);
  if (state.sleepMs) await abortableSleep(state.sleepMs, config.signal);
  const failTimes = state.failTimes ?? 0;
  const { attempt } = runContext(config);
  if (attempt <= failTimes) throw new Error(`echo: planned failure on attempt ${attempt} of the first ${failTimes}`);
  return { done: n, log: [`step ${n}`] };
}

/** `echo`: the tiny graph for benchmarks and recovery tests. Input `{ steps?, sleepMs?, failTimes?, traceNodes? }`. */
export const echoGraph: GraphDefinition = {
  name: 'echo',
  description: 'Runs `steps` (default 2) sequential steps, each sleeping `sleepMs`; fails the first `failTimes` attempts.',
  validateInput: (input) => describeIssues('echo', EchoInput.safeParse(input ?? {})),
  build(checkpointer) {
    return (
      new StateGraph(State)
        .addNode('step', step)
        .addEdge(START, 'step')
        .addConditionalEdges('step', (s) => (s.done >= (s.steps ?? 2) ? END : 'step'))
        .compile({ checkpointer })
        // One superstep per step: up to 1,000 (EchoInput), beyond LangGraph's default limit of 25.
        .withConfig({ recursionLimit: 1_001 })
    );
  },
};
