// The graph langgraph.json serves as `agent`: a chat model that calls a booking tool, wired the
// usual LangGraph way (ToolNode, toolsCondition). The tool books through Runledger's effects
// ledger (toolEffect), so a crash, retry or replay never books the table twice.
import { tool } from '@langchain/core/tools';
import { type LangGraphRunnableConfig, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { toolEffect } from '@runledger/runtime';
import { z } from 'zod';
import { ScriptedBookingModel } from './model.js';
import { bookTable } from './provider.js';

const book = tool(
  toolEffect({ name: 'book_table', idempotent: true }, async ({ restaurant, people }: { restaurant: string; people: number }, idempotencyKey) => {
    const booking = await bookTable(restaurant, people, idempotencyKey);
    return `table for ${booking.people} at ${booking.restaurant}, booking ${booking.bookingId}`;
  }),
  { name: 'book_table', description: 'Books a restaurant table.', schema: z.object({ restaurant: z.string(), people: z.number().int().min(1) }) },
);

const model = new ScriptedBookingModel({});

async function callModel(state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) {
  return { messages: [await model.invoke(state.messages, config)] };
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', callModel)
  .addNode('tools', new ToolNode([book]))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', toolsCondition, ['tools', '__end__'])
  .addEdge('tools', 'agent')
  .compile();
