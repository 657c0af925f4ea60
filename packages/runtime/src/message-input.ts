import { coerceMessageLikeToMessage } from '@langchain/core/messages';
import { messagesStateReducer } from '@langchain/langgraph';

/**
 * Why `value`, the input of a messages channel (one message-like or a list of them), is not
 * something LangGraph's messages reducer can read, judged by the function that reducer calls
 * (LangChain's `coerceMessageLikeToMessage`), naming the first bad entry by its path; undefined
 * when every entry coerces. Never quotes the value: LangChain's own error does, and an input
 * refused at admission must not reach a log.
 */
export function messagesProblem(path: string, value: unknown): string | undefined {
  const list = Array.isArray(value) ? value : [value];
  for (const [i, message] of list.entries()) {
    try {
      coerceMessageLikeToMessage(message as Parameters<typeof coerceMessageLikeToMessage>[0]);
    } catch {
      const at = Array.isArray(value) ? `${path}.${i}` : path;
      return `${at}: not a message LangChain can read; send a string, { role, content } with role user, assistant, system, developer or tool, a [role, content] pair, or a serialized LangChain message`;
    }
  }
  return undefined;
}

/** The channels of a graph's input that LangGraph's messages reducer folds (MessagesAnnotation, MessagesZodState, or one declared with it). */
export function messageChannels(channels: Record<string, unknown>): string[] {
  return Object.entries(channels)
    .filter(([, channel]) => (channel as { operator?: unknown } | null)?.operator === messagesStateReducer)
    .map(([name]) => name);
}
