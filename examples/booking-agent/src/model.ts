// An offline chat model that plays a booking agent's script: no network, no API key. Given a
// request ("a table for 2 at Chez Ada"), it answers with one call of the book_table tool; once
// the tool answered, it confirms. Swap in ChatOpenAI or any chat model for a real agent.
import { createHash } from 'node:crypto';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

export class ScriptedBookingModel extends BaseChatModel {
  _llmType(): string {
    return 'scripted-booking';
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages.at(-1);
    const message = ToolMessage.isInstance(last) ? new AIMessage(`Done: ${last.text}`) : this.callTool(messages);
    return { generations: [{ text: message.text, message }] };
  }

  private callTool(messages: BaseMessage[]): AIMessage {
    const request = messages.filter((m) => HumanMessage.isInstance(m)).at(-1)?.text ?? '';
    const people = Number(/for (\d+)/.exec(request)?.[1] ?? 2);
    const restaurant = /at (.+)$/.exec(request)?.[1]?.trim() ?? 'Chez Ada';
    // The same conversation asks with the same call id, so a re-run of this turn after a crash
    // names the same effect (Runledger keys it on thread + tool_call_id).
    const id = `call_${createHash('sha256').update(`${messages.length}:${request}`).digest('hex').slice(0, 16)}`;
    return new AIMessage({ content: '', tool_calls: [{ id, name: 'book_table', args: { restaurant, people }, type: 'tool_call' }] });
  }
}
