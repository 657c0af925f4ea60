import { createHash } from 'node:crypto';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, ToolMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import type { BookingKind } from '@runledger/ledger';

/** The tool the model asks for to book each kind, in the order it asks. */
export const BOOKING_TOOLS: ReadonlyArray<{ kind: BookingKind; tool: string }> = [
  { kind: 'flight', tool: 'book_flight' },
  { kind: 'hotel', tool: 'book_hotel' },
  { kind: 'car', tool: 'book_car' },
];

/** The user's request the agent starts each turn with. */
export const VACATION_REQUEST = 'Book my vacation: a flight, a hotel and a rental car.';

/**
 * An offline chat model that plays the vacation agent's script, with no network and no keys.
 * Asked to act on a request, it answers with one AIMessage holding three parallel tool calls
 * (book_flight, book_hotel, book_car); once their ToolMessages follow, it summarises them.
 * Tool call ids derive from `callIdSeed` (the job id), so a replay asks for the same ids.
 */
export class ScriptedVacationModel extends BaseChatModel {
  private readonly callIdSeed: string;

  constructor(fields: { callIdSeed: string }) {
    super({});
    this.callIdSeed = fields.callIdSeed;
  }

  _llmType(): string {
    return 'scripted-vacation';
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = ToolMessage.isInstance(messages.at(-1)) ? summarise(messages) : this.requestBookings();
    return { generations: [{ text: message.text, message }] };
  }

  private requestBookings(): AIMessage {
    const prefix = createHash('sha256').update(this.callIdSeed).digest('hex').slice(0, 16);
    return new AIMessage({
      content: '',
      tool_calls: BOOKING_TOOLS.map(({ kind, tool }) => ({ id: `call_${prefix}_${kind}`, name: tool, args: {}, type: 'tool_call' as const })),
    });
  }
}

/** The final answer: one line per tool result since the model's last tool calls. */
function summarise(messages: BaseMessage[]): AIMessage {
  const firstResult = messages.findLastIndex((m) => AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0) + 1;
  const results = messages.slice(firstResult).filter((m) => ToolMessage.isInstance(m));
  const lines = results.map((m) => `- ${m.name ?? 'tool'}: ${m.text}`);
  return new AIMessage(`Your vacation is booked:\n${lines.join('\n')}`);
}
