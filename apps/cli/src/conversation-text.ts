// LangChain messages in the terminal: one block per message (role, text, tool calls with their
// arguments, tool results), read by the ledger's conversationOf like the dashboard and the API.
import type { MessageView } from '@runledger/ledger/core';
import { compact, type Paint } from './format';

const ROLE_WIDTH = 10;

/** The messages as indented lines: `user       Book my vacation.`, `assistant  → book_flight({…})`. */
export function conversationLines(messages: MessageView[], paint: Paint, width = 160): string[] {
  const lines: string[] = [];
  const pad = ' '.repeat(2 + ROLE_WIDTH + 1);
  for (const m of messages) {
    const who = (m.role === 'tool' && m.name ? m.name : m.role).padEnd(ROLE_WIDTH);
    const head = `  ${paint.bold(who)} `;
    const text = m.role === 'tool' ? `${paint.dim('→')} ${compact(m.text, width)}` : compact(m.text, width);
    const calls = m.toolCalls.map((c) => `${paint.cyan(`call ${c.name}`)}(${compact(JSON.stringify(c.args), width - c.name.length)})`);
    const body = [...(m.text ? [text] : []), ...calls];
    if (body.length === 0) body.push(paint.dim('(empty)'));
    body.forEach((b, i) => {
      lines.push(`${i === 0 ? head : pad}${b}`);
    });
  }
  return lines;
}
