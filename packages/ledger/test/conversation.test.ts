import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { conversationOf, interruptQuestions, messageView, otherFields } from '../src/conversation';

// What the ledger stores: the run's state through JSON (jsonb), LangChain's serialised form.
const stored = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe('conversationOf', () => {
  it('reads real LangChain messages as they come back from JSON: roles, text, tool calls with arguments, tool results', () => {
    const state = stored({
      messages: [
        new SystemMessage('You book trips.'),
        new HumanMessage('Book my vacation.'),
        new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name: 'book_flight', args: { from: 'LIS', to: 'NRT' }, type: 'tool_call' }] }),
        new ToolMessage({ content: 'FLIGHT-1', tool_call_id: 'call_1', name: 'book_flight' }),
        new AIMessage({ content: [{ type: 'text', text: 'Booked: FLIGHT-1.' }] }),
      ],
      bookings: 1,
    });
    expect(JSON.stringify(state)).toContain('"lc":1');
    expect(conversationOf(state)).toEqual([
      { role: 'system', text: 'You book trips.', name: null, toolCalls: [], toolCallId: null },
      { role: 'user', text: 'Book my vacation.', name: null, toolCalls: [], toolCallId: null },
      { role: 'assistant', text: '', name: null, toolCalls: [{ id: 'call_1', name: 'book_flight', args: { from: 'LIS', to: 'NRT' } }], toolCallId: null },
      { role: 'tool', text: 'FLIGHT-1', name: 'book_flight', toolCalls: [], toolCallId: 'call_1' },
      { role: 'assistant', text: 'Booked: FLIGHT-1.', name: null, toolCalls: [], toolCallId: null },
    ]);
    expect(otherFields(state)).toEqual({ bookings: 1 });
  });

  it('reads the message-likes an admission carries: { role, content }, tuples, { type }, OpenAI tool calls', () => {
    const input = {
      messages: [
        { role: 'user', content: 'hi' },
        ['assistant', 'hello'],
        { type: 'human', content: [{ type: 'text', text: 'again' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] },
      ],
    };
    const views = conversationOf(input) ?? [];
    expect(views.map((m) => [m.role, m.text])).toEqual([
      ['user', 'hi'],
      ['assistant', 'hello'],
      ['user', 'again'],
      ['assistant', ''],
    ]);
    expect(views[3]?.toolCalls).toEqual([{ id: 'c', name: 'f', args: { x: 1 } }]);
  });

  it('is null when there is nothing conversational, so the raw JSON is shown instead', () => {
    expect(conversationOf({ delays: { car: 10 } })).toBeNull();
    expect(conversationOf({ messages: [] })).toBeNull();
    expect(conversationOf({ messages: [{ role: 'user', content: 'x' }, { what: 'not a message' }] })).toBeNull();
    expect(conversationOf(null)).toBeNull();
    expect(messageView({ role: 'wizard', content: 'x' })).toBeNull();
  });
});

describe('interruptQuestions', () => {
  it("takes each interrupt's question, its text, or its JSON", () => {
    expect(interruptQuestions([{ id: 'a', value: { question: 'Approve "a boat"?' } }, { value: 'Continue?' }, { value: { amount: 3 } }])).toEqual([
      'Approve "a boat"?',
      'Continue?',
      '{"amount":3}',
    ]);
    expect(interruptQuestions(null)).toEqual([]);
  });
});
