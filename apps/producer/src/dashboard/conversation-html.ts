import { conversationOf, interruptQuestions, type MessageView, otherFields } from '@runledger/ledger';
import { type Html, html, jsonBlock } from './html';

/** The raw JSON, one click away. */
export const rawJson = (value: unknown, label = 'Raw JSON'): Html => html`<details class="raw"><summary>${label}</summary>${jsonBlock(value)}</details>`;

const args = (value: unknown) => JSON.stringify(value);

function message(m: MessageView): Html {
  const who = m.name ? html`${m.role} · <span class="name">${m.name}</span>` : m.role;
  const answers = m.toolCallId ? html` <span class="mono muted">answers ${m.toolCallId}</span>` : '';
  const calls = m.toolCalls.length
    ? html`<ul class="tool-calls">${m.toolCalls.map(
        (c) =>
          html`<li class="tool-call"><span class="tool-name">${c.name}</span>(<code class="tool-args">${args(c.args)}</code>)${c.id ? html` <span class="mono muted">${c.id}</span>` : ''}</li>`,
      )}</ul>`
    : '';
  const text = m.text ? html`<div class="text">${m.text}</div>` : '';
  return html`<li class="message role-${m.role}" data-role="${m.role}"><div class="who">${who}${answers}</div>${text}${calls}</li>`;
}

/** Messages as a conversation: who spoke, the text, tool calls with their arguments, tool results. */
export const conversation = (messages: MessageView[]): Html => html`<ol class="conversation">${messages.map(message)}</ol>`;

/**
 * A job's input or state: its LangChain messages as a conversation and its other fields as JSON,
 * with the raw value behind a click; a value without messages as JSON.
 */
export function stateSection(title: string, id: string, value: unknown): Html {
  const messages = conversationOf(value);
  if (!messages) return html`<section id="${id}"><h2>${title}</h2>${jsonBlock(value)}</section>`;
  const rest = otherFields(value);
  return html`<section id="${id}"><h2>${title}</h2>${conversation(messages)}${rest ? html`<h3>Other fields</h3>${jsonBlock(rest)}` : ''}${rawJson(value)}</section>`;
}

/** What a parked job asks, in words, shown above the resume form. */
export function questionSection(interrupt: unknown): Html {
  const questions = interruptQuestions(interrupt);
  if (questions.length === 0) return html``;
  return html`<section class="question" id="interrupt"><h2>The graph asks</h2>${questions.map((q) => html`<blockquote class="interrupt-question">${q}</blockquote>`)}${rawJson(interrupt, 'Raw interrupt')}</section>`;
}
