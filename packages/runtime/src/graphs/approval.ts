import { Annotation, END, interrupt, type LangGraphRunnableConfig, START, StateGraph } from '@langchain/langgraph';
import { z } from 'zod';
import { traceNode } from '../context';
import type { GraphDefinition } from '../registry';
import { describeIssues } from './input';

const ApprovalInput = z.object({ request: z.string().min(1).max(10_000), traceNodes: z.boolean().optional() }).strict();

const State = Annotation.Root({
  request: Annotation<string>,
  traceNodes: Annotation<boolean | undefined>,
  decision: Annotation<string | undefined>,
  outcome: Annotation<string | undefined>,
});

async function review(state: typeof State.State, config: LangGraphRunnableConfig) {
  // interrupt() re-runs this node from its first line on resume: only idempotent work before it.
  await traceNode(config, 'review', state.traceNodes === true);
  const answer = interrupt({ question: `Approve "${state.request}"? Resume with { "approved": true|false }.` }) as { approved?: boolean } | boolean;
  const approved = typeof answer === 'boolean' ? answer : answer?.approved === true;
  return { decision: approved ? 'approved' : 'rejected' };
}

async function finish(state: typeof State.State, config: LangGraphRunnableConfig) {
  await traceNode(config, 'finish', state.traceNodes === true);
  return { outcome: `${state.request}: ${state.decision}` };
}

/** `approval`: human in the loop. Parks as `interrupted` until resumed with `{ approved }`. */
export const approvalGraph: GraphDefinition = {
  name: 'approval',
  description: 'Asks a person to approve `request` through interrupt(); resume with { approved: boolean }.',
  validateInput: (input) => describeIssues('approval', ApprovalInput.safeParse(input)),
  build(checkpointer) {
    return new StateGraph(State)
      .addNode('review', review)
      .addNode('finish', finish)
      .addEdge(START, 'review')
      .addEdge('review', 'finish')
      .addEdge('finish', END)
      .compile({ checkpointer });
  },
};
