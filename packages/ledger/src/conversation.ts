// A job's stored LangChain messages as a conversation people can read. The ledger keeps a run's
// state as JSON, where a message is LangChain's serialised form
// ({ lc: 1, type: 'constructor', id: [..., 'AIMessage'], kwargs: { content, tool_calls, … } });
// an admission's input holds message-likes ({ role, content }, ['user', 'hi'], { type: 'human', … }).
// The dashboard, the CLI and the API all show both through this one reader. It works on the JSON
// alone, so a reader needs no LangChain (the CLI stays quick to start).

/** One tool call an assistant message asked for. */
export interface ToolCallView {
  id: string | null;
  name: string;
  args: unknown;
}

/** One message: who said it, its text, the tools it called, and for a tool result which call it answers. */
export interface MessageView {
  role: 'user' | 'assistant' | 'system' | 'tool' | (string & {});
  text: string;
  name: string | null;
  toolCalls: ToolCallView[];
  toolCallId: string | null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

// LangChain's class names and message types, mapped to the roles chat APIs use.
const ROLES: Record<string, MessageView['role']> = {
  human: 'user',
  user: 'user',
  humanmessage: 'user',
  humanmessagechunk: 'user',
  ai: 'assistant',
  assistant: 'assistant',
  aimessage: 'assistant',
  aimessagechunk: 'assistant',
  system: 'system',
  developer: 'system',
  systemmessage: 'system',
  systemmessagechunk: 'system',
  tool: 'tool',
  function: 'tool',
  toolmessage: 'tool',
  toolmessagechunk: 'tool',
  functionmessage: 'tool',
};

/** A message's content as text: a string, or the text parts of a list of content blocks. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? '' : JSON.stringify(content);
  return content
    .map((block) => (typeof block === 'string' ? block : isObj(block) && typeof block.text === 'string' ? block.text : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/** Arguments as an object when they arrive as JSON text (OpenAI's `function.arguments`). */
function argsOf(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function toolCallsOf(fields: Obj): ToolCallView[] {
  const calls = Array.isArray(fields.tool_calls) ? fields.tool_calls : isObj(fields.additional_kwargs) ? fields.additional_kwargs.tool_calls : undefined;
  if (!Array.isArray(calls)) return [];
  return calls.filter(isObj).map((call) => {
    const fn = isObj(call.function) ? call.function : undefined;
    return { id: str(call.id), name: str(call.name) ?? str(fn?.name) ?? '?', args: argsOf(call.args ?? fn?.arguments) };
  });
}

/** One stored message as a view, or null when `value` is not a message. */
export function messageView(value: unknown): MessageView | null {
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string') {
    const role = ROLES[value[0].toLowerCase()];
    return role ? { role, text: textOf(value[1]), name: null, toolCalls: [], toolCallId: null } : null;
  }
  if (!isObj(value)) return null;
  const serialised = value.lc === 1 && value.type === 'constructor' && Array.isArray(value.id) && isObj(value.kwargs);
  const fields = serialised ? (value.kwargs as Obj) : value;
  const kind = serialised ? String((value.id as unknown[]).at(-1)) : (str(value.role) ?? str(value.type) ?? '');
  let role = ROLES[kind.toLowerCase()];
  // ChatMessage carries its own role.
  if (!role && kind === 'ChatMessage') role = str(fields.role) ?? undefined;
  if (!role || !('content' in fields)) return null;
  return {
    role,
    text: textOf(fields.content),
    name: str(fields.name),
    toolCalls: toolCallsOf(fields),
    toolCallId: str(fields.tool_call_id),
  };
}

/**
 * The conversation in a job's input or state: its `messages` (or the value itself when it is a
 * list), each as a MessageView. Null when there is no list of messages to show, so a caller
 * shows the raw JSON instead.
 */
export function conversationOf(value: unknown): MessageView[] | null {
  const list = Array.isArray(value) ? value : isObj(value) ? value.messages : undefined;
  if (!Array.isArray(list) || list.length === 0) return null;
  const views = list.map(messageView);
  return views.every((v) => v !== null) ? (views as MessageView[]) : null;
}

/**
 * What a parked job asks a person: the text of each pending interrupt (`interrupt(value)`:
 * the value when it is text, else its `question`, `message` or `prompt`, else its JSON).
 */
export function interruptQuestions(interrupt: unknown): string[] {
  const list = Array.isArray(interrupt) ? interrupt : interrupt === null || interrupt === undefined ? [] : [interrupt];
  return list.map((item) => {
    const value = isObj(item) && 'value' in item ? item.value : item;
    if (typeof value === 'string') return value;
    if (isObj(value)) {
      const text = str(value.question) ?? str(value.message) ?? str(value.prompt);
      if (text) return text;
    }
    return JSON.stringify(value) ?? 'null';
  });
}

/** The fields of a state other than its messages (what a conversation view leaves out), or null when none. */
export function otherFields(value: unknown): Obj | null {
  if (!isObj(value)) return null;
  const { messages: _messages, ...rest } = value;
  return Object.keys(rest).length > 0 ? rest : null;
}

/** A JSON object the question text spells (`Resume with { "approved": true|false }`), its first alternative taken. */
function spelledObject(text: string): unknown {
  const snippet = /\{[^{}]*\}/.exec(text)?.[0];
  if (!snippet) return undefined;
  try {
    return JSON.parse(snippet.replace(/([\w"]+)(\s*\|\s*[\w"]+)+/g, '$1'));
  } catch {
    return undefined;
  }
}

/**
 * The resume value a form offers for a parked job, as JSON text: the first interrupt's own
 * `resume` example when it gives one, else the object its question spells, else `true`.
 */
export function resumePrefill(interrupt: unknown): string {
  const first = Array.isArray(interrupt) ? interrupt[0] : interrupt;
  const value = isObj(first) && 'value' in first ? first.value : first;
  if (isObj(value) && value.resume !== undefined) return JSON.stringify(value.resume);
  const question = interruptQuestions(first === undefined ? [] : [first])[0];
  const spelled = question === undefined ? undefined : spelledObject(question);
  return spelled === undefined ? 'true' : JSON.stringify(spelled);
}
