/**
 * Deepest nesting of arrays and objects a JSON body may have. JSON.stringify, the ledger's sealing
 * and pg's serialisation are recursive: a 10 KB body nested 5,000 levels deep overflowed the stack.
 */
export const MAX_JSON_DEPTH = 100;

// Without the u flag the pattern sees UTF-16 code units: a high surrogate without its low half, or the reverse.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const key = (k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`);

/** Why a string cannot be stored: PostgreSQL refuses \u0000 in text and jsonb, and a lone surrogate in jsonb. */
function stringProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'contains the NUL character (\\u0000), which PostgreSQL cannot store';
  if (LONE_SURROGATE.test(s)) return 'contains a lone UTF-16 surrogate (such as \\ud800), which is not valid Unicode';
  return undefined;
}

/** Why a field name is refused: `__proto__`, or `constructor` holding `prototype`, would reach an object's prototype once copied by assignment. */
function prototypeKey(k: string, v: unknown): string | undefined {
  if (k === '__proto__' || (k === 'constructor' && typeof v === 'object' && v !== null && 'prototype' in v)) {
    return `the field name "${k}" is refused (copied by assignment it would change an object's prototype); rename it`;
  }
  return undefined;
}

/**
 * The first problem of a parsed JSON body, as `body.path: what` for a 400, or undefined when it
 * can be stored: nesting deeper than MAX_JSON_DEPTH, a string (value or key) with \u0000 or a
 * lone surrogate, or a prototype-changing field name (prototypeKey). Walks with its own stack, so the check itself cannot overflow. `path` names the
 * value in the message (default `body`).
 */
export function jsonBodyProblem(body: unknown, path = 'body'): string | undefined {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: body, path, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, path, depth } = item;
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem) return `${path} ${problem}.`;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return `${path.slice(0, 60)}… is nested more than ${MAX_JSON_DEPTH} levels deep.`;
    for (const [k, v] of Object.entries(value)) {
      const problem = stringProblem(k);
      if (problem) return `${path}: a field name ${problem}.`;
      const proto = prototypeKey(k, v);
      if (proto) return `${path}: ${proto}.`;
      stack.push({ value: v, path: `${path}${Array.isArray(value) ? `[${k}]` : key(k)}`, depth: depth + 1 });
    }
  }
  return undefined;
}

/**
 * jsonBodyProblem of a body whose `items` field holds a list checked item by item by its route (a
 * batch, where one bad job must not refuse the others): everything but that list's items.
 */
export function envelopeProblem(body: unknown, items: string | undefined): string | undefined {
  if (items === undefined || typeof body !== 'object' || body === null || !Array.isArray((body as Record<string, unknown>)[items]))
    return jsonBodyProblem(body);
  const { [items]: _checkedByTheRoute, ...rest } = body as Record<string, unknown>;
  return jsonBodyProblem(rest);
}
