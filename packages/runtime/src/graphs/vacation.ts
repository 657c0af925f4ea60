import { AIMessage, HumanMessage, type ToolCall, ToolMessage } from '@langchain/core/messages';
import { Annotation, END, type LangGraphRunnableConfig, MessagesAnnotation, Send, START, StateGraph } from '@langchain/langgraph';
import { z } from 'zod';
import { runContext, traceNode } from '../context';
import type { GraphDefinition } from '../registry';
import { describeIssues } from './input';
import { BOOKING_TOOLS, ScriptedVacationModel, VACATION_REQUEST } from './vacation-model';
import { type BookingOptions, bookingTool, type PerKindMs } from './vacation-tools';

const Ms = z.number().int().min(0).max(600_000);
const PerKind = z.object({ flight: Ms.optional(), hotel: Ms.optional(), car: Ms.optional() }).strict();

const VacationInput = z
  .object({
    delays: PerKind.optional(),
    afterCall: PerKind.optional(),
    providerIdempotent: z.boolean().optional(),
    reconcile: z.boolean().optional(),
    traceNodes: z.boolean().optional(),
  })
  .strict();

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  delays: Annotation<PerKindMs | undefined>,
  afterCall: Annotation<PerKindMs | undefined>,
  providerIdempotent: Annotation<boolean | undefined>,
  reconcile: Annotation<boolean | undefined>,
  traceNodes: Annotation<boolean | undefined>,
});

type VacationState = typeof State.State;

/** The payload of one tool task: the model's call and the options the tools run with. */
interface ToolTask {
  call: ToolCall;
  options: BookingOptions;
}

/** The model's turn. A turn starts with the user's request unless the tools just answered. */
async function agent(state: VacationState, config: LangGraphRunnableConfig) {
  const ctx = runContext(config);
  await traceNode(config, 'agent', state.traceNodes === true);
  const request = ToolMessage.isInstance(state.messages.at(-1)) ? [] : [new HumanMessage(VACATION_REQUEST)];
  const reply = await new ScriptedVacationModel({ callIdSeed: ctx.jobId }).invoke([...state.messages, ...request], config);
  return { messages: [...request, reply] };
}

/** One task per tool call (Send), so each finished call's ToolMessage is saved as its own pending write. */
function routeToolCalls(state: VacationState): Send[] | typeof END {
  const last = state.messages.at(-1);
  const calls = last && AIMessage.isInstance(last) ? (last.tool_calls ?? []) : [];
  if (calls.length === 0) return END;
  const options: BookingOptions = {
    delays: state.delays,
    afterCall: state.afterCall,
    providerIdempotent: state.providerIdempotent,
    reconcile: state.reconcile,
    traceNodes: state.traceNodes,
  };
  return calls.map((call) => new Send('tool', { call, options } satisfies ToolTask));
}

/** Runs one tool call and appends its ToolMessage. */
async function runToolCall(task: ToolTask, config: LangGraphRunnableConfig) {
  const spec = BOOKING_TOOLS.find((t) => t.tool === task.call.name);
  if (!spec) throw new Error(`vacation: the model asked for unknown tool ${task.call.name}`);
  const message = await bookingTool(spec.kind, spec.tool, task.options).invoke({ ...task.call, type: 'tool_call' }, config);
  return { messages: [message] };
}

/**
 * `vacation`: an offline agent. A scripted model asks for flight, hotel and car in parallel;
 * each tool books through the effects ledger with the demo provider (`example_bookings`).
 * Input `{ delays?, afterCall?, providerIdempotent?, reconcile?, traceNodes? }`.
 */
export const vacationGraph: GraphDefinition = {
  name: 'vacation',
  description: 'Books flight, hotel and car in parallel through the effects ledger (offline scripted agent).',
  validateInput: (input) => describeIssues('vacation', VacationInput.safeParse(input ?? {})),
  build(checkpointer) {
    return new StateGraph(State)
      .addNode('agent', agent)
      .addNode('tool', runToolCall)
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', routeToolCalls, ['tool', END])
      .addEdge('tool', 'agent')
      .compile({ checkpointer });
  },
};
