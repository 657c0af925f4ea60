import { FakeListChatModel } from '@langchain/core/utils/testing';
import { Annotation, END, type LangGraphRunnableConfig, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { z } from 'zod';
import { messagesProblem } from '../message-input';
import type { GraphDefinition } from '../registry';
import { describeIssues } from './input';

// Which messages are valid is LangChain's decision (messagesProblem), not a schema of ours.
const ChatInput = z.object({ messages: z.unknown(), tokenDelayMs: z.number().int().min(0).max(10_000).optional() }).strict();

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  tokenDelayMs: Annotation<number | undefined>({ reducer: (_a, b) => b, default: () => undefined }),
});

/** Answers the last message with a scripted reply, streamed one character at a time. */
async function reply(state: typeof State.State, config: LangGraphRunnableConfig) {
  const last = state.messages.at(-1);
  // The message's text parts: agent-chat-ui and other chat clients send content as [{ type: 'text', text }].
  const text = last?.text ?? '';
  // A fake chat model from @langchain/core: streams its response character by character, no network.
  const model = new FakeListChatModel({ responses: [`You said: ${text}`], sleep: state.tokenDelayMs ?? 5 });
  return { messages: [await model.invoke(state.messages, config)] };
}

/** `chat`: an offline chat graph whose model streams tokens (messages-tuple), for the LangGraph API. */
export const chatGraph: GraphDefinition = {
  name: 'chat',
  description: 'Replies "You said: <last message>" through a fake streaming chat model; input { messages, tokenDelayMs? }.',
  validateInput: (input) => {
    const parsed = ChatInput.safeParse(input);
    const problem = parsed.success ? messagesProblem('messages', parsed.data.messages) : undefined;
    return problem ? `chat input: ${problem}` : describeIssues('chat', parsed);
  },
  build(checkpointer) {
    return new StateGraph(State).addNode('reply', reply).addEdge(START, 'reply').addEdge('reply', END).compile({ checkpointer });
  },
};
