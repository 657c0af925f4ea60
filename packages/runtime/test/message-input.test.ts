// Admission refuses a messages input LangChain cannot coerce (issue 42.4): the check is LangChain's
// own coercion, applied to the chat graph and to any StateGraph input channel folded by
// LangGraph's messages reducer, and its answer names the field without quoting the value.
import { HumanMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, MessagesZodState, START, StateGraph } from '@langchain/langgraph';
import { expect, it } from 'vitest';
import { builtInGraphs, inputCheck } from '../src/index';

const SECRET = 'SECRET-CONTENT-7f3a';
const refusable = [{ role: 'bogus', content: SECRET }, { content: SECRET }, 42, null];
const readable = [
  'hello',
  { role: 'user', content: 'hi' },
  { type: 'ai', content: 'hello' },
  ['human', 'a tuple'],
  new HumanMessage('an instance'),
  { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'HumanMessage'], kwargs: { content: 'serialized' } },
];

it('the chat graph refuses each message LangChain cannot coerce, naming its index, never its content', () => {
  const check = builtInGraphs.find((g) => g.name === 'chat')?.validateInput;
  expect(check).toBeDefined();
  expect(check?.({ messages: readable })).toBeUndefined();
  expect(check?.({ messages: 'one string' })).toBeUndefined();
  for (const bad of refusable) {
    const problem = check?.({ messages: [{ role: 'user', content: 'fine' }, bad] });
    expect(problem).toMatch(/^chat input: messages\.1: not a message LangChain can read/);
    expect(problem).not.toContain(SECRET);
  }
  expect(check?.({ messages: { role: 'bogus', content: SECRET } })).toMatch(/^chat input: messages: not a message/);
});

it('a StateGraph input channel with the messages reducer (Annotation or zod) gets the same check; other fields do not', () => {
  const node = () => ({});
  for (const state of [MessagesAnnotation, MessagesZodState]) {
    const builder = new StateGraph(state).addNode('a', node).addEdge(START, 'a').addEdge('a', END);
    const check = inputCheck('agent', builder as unknown as Parameters<typeof inputCheck>[1]);
    expect(check({ messages: readable })).toBeUndefined();
    expect(check({})).toBeUndefined();
    const problem = check({ messages: [{ role: 'bogus', content: SECRET }] });
    expect(problem).toMatch(/^agent input: messages\.0: not a message LangChain can read/);
    expect(problem).not.toContain(SECRET);
  }
});
