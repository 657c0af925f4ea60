// The built-in chat graph answers the text of the last message, whichever shape LangChain allows
// for its content: a string, or content blocks as agent-chat-ui sends them ([{ type: 'text', text }]).
import { MemorySaver } from '@langchain/langgraph';
import { expect, it } from 'vitest';
import { builtInGraphs } from '../src/index';

const chat = builtInGraphs.find((g) => g.name === 'chat');

async function replyTo(content: unknown): Promise<unknown> {
  const graph = chat?.build(new MemorySaver());
  const out = (await graph?.invoke({ messages: [{ role: 'user', content }], tokenDelayMs: 0 }, { configurable: { thread_id: 'chat-graph-test' } })) as {
    messages: { content: unknown }[];
  };
  return out.messages.at(-1)?.content;
}

it('replies to a string message with its text', async () => {
  expect(await replyTo('hello')).toBe('You said: hello');
});

it("replies to content blocks with their text parts, as agent-chat-ui sends them, not the blocks' JSON", async () => {
  expect(await replyTo([{ type: 'text', text: 'hello from the UI' }])).toBe('You said: hello from the UI');
  expect(
    await replyTo([
      { type: 'text', text: 'two ' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      { type: 'text', text: 'parts' },
    ]),
  ).toBe('You said: two parts');
});
