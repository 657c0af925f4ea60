import fc from 'fast-check';
import type { InjectOptions } from 'fastify';

// fast-check arbitraries for requests to the operations of an OpenAPI 3.1 document: each value
// is near what the schema accepts (so requests get past the first check), or mutated away from
// it (a missing field, an unknown one, a wrong type, a huge string, bytes that are not JSON).

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
};

export interface Operation {
  method: string;
  /** The path template, `/v1/jobs/{jobId}`. */
  path: string;
  parameters: Array<{ name: string; in: string; schema?: Schema }>;
  body?: Schema;
  /** The statuses the document lists for it. */
  statuses: string[];
}

/** Every operation of the document. */
export function operationsOf(doc: { paths: Record<string, Record<string, Record<string, unknown>>> }): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      parameters: (op.parameters as Operation['parameters']) ?? [],
      body: (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content?.['application/json']?.schema,
      statuses: Object.keys((op.responses as object) ?? {}),
    })),
  );
}

/** Percent-encodes the UTF-8 bytes of `s` (a lone surrogate becomes U+FFFD, where encodeURIComponent throws). */
const pct = (s: string) =>
  [...Buffer.from(s)].map((b) => (/[\w.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`)).join('');

/**
 * A generated value as query or header text. String() throws for an object without a prototype
 * (fast-check generates those), so objects are written as JSON.
 */
const asText = (v: unknown) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));

/** `arb`'s value once in `n` times, otherwise undefined. */
const onceIn = <T>(n: number, arb: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(undefined), weight: n - 1 }, { arbitrary: arb, weight: 1 });

/** Strings a parser or a database may choke on. */
const nasty = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  '\ud800',
  '~x',
  '..',
  '%',
  '%zz',
  '%c0%af',
  '0',
  '-1',
  '1e309',
  'null',
  '[]',
  '{}',
  '😀',
  'a/b',
  'x'.repeat(600),
);
const anyString = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), nasty);
/** Any JSON-ish value, with strings that PostgreSQL refuses in jsonb. */
const anyJson = fc.oneof(fc.jsonValue({ maxDepth: 3 }), anyString, fc.constant({ deep: JSON.parse(`${'['.repeat(150)}${']'.repeat(150)}`) }));

/** Values that mean something to the server (a graph that exists, a thread in use), by field name. */
export type Examples = Record<string, unknown[]>;

/** Values of `schema`, mostly valid, sometimes not; a field named in `examples` often takes one of them. */
export function valueFor(schema: Schema | undefined, examples: Examples = {}, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return anyJson;
  const exact = exactValueFor(schema, examples, depth);
  return fc.oneof({ arbitrary: exact, weight: 12 }, { arbitrary: anyJson, weight: 1 });
}

function exactValueFor(schema: Schema, examples: Examples, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices) return fc.oneof(...choices.map((s) => valueFor(s, examples, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 30, 30) });
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valueFor(schema.items, examples, depth + 1), { maxLength: 4 });
    case 'object':
      return objectOf(schema, examples, depth);
    default:
      return anyJson;
  }
}

function objectOf(schema: Schema, examples: Examples, depth: number): fc.Arbitrary<unknown> {
  const props = schema.properties ?? {};
  const field = (k: string, s: Schema) => {
    const known = examples[k];
    const any = valueFor(s, examples, depth + 1);
    return known?.length ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, { arbitrary: any, weight: 1 }) : any;
  };
  const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, field(k, s)])), {
    requiredKeys: (schema.required ?? []).filter((k) => k in props),
  });
  // Sometimes one field more, or one required field less.
  return fc
    .tuple(record, fc.option(fc.tuple(anyString, anyJson)), fc.option(fc.constantFrom(...(schema.required ?? ['']))), fc.nat(9))
    .map(([value, extra, drop, n]) => {
      const out: Record<string, unknown> = { ...(value as object) };
      if (extra && n === 0) out[extra[0]] = extra[1];
      if (drop && n === 1) delete out[drop];
      return out;
    });
}

/** How a value becomes bytes on the wire, and what the headers claim about them. */
const utf8Json = { contentType: 'application/json', encode: (s: string) => Buffer.from(s) };
const encodings = fc.constantFrom(
  utf8Json,
  utf8Json,
  utf8Json,
  utf8Json,
  utf8Json,
  utf8Json,
  { contentType: 'application/json; charset=utf-8', encode: (s: string) => Buffer.from(s) },
  { contentType: 'APPLICATION/JSON', encode: (s: string) => Buffer.from(s) },
  { contentType: 'application/json; charset=latin1', encode: (s: string) => Buffer.from(s, 'latin1') },
  { contentType: 'application/json; charset=utf-16le', encode: (s: string) => Buffer.from(s, 'utf16le') },
  { contentType: 'application/json', encode: (s: string) => Buffer.from(s, 'utf16le') },
  { contentType: 'text/plain', encode: (s: string) => Buffer.from(s) },
  { contentType: 'application/x-www-form-urlencoded', encode: (s: string) => Buffer.from(s) },
  { contentType: 'multipart/form-data; boundary=x', encode: (s: string) => Buffer.from(s) },
  { contentType: undefined, encode: (s: string) => Buffer.from(s) },
);

/** The JSON text of a body: the value's, cut short, padded past `bodyLimit`, or not JSON at all. */
function bodyTextOf(schema: Schema | undefined, examples: Examples, bodyLimit: number): fc.Arbitrary<string> {
  const json = valueFor(schema, examples).map((v) => JSON.stringify(v) ?? 'null');
  return fc.oneof(
    { arbitrary: json, weight: 6 },
    { arbitrary: json.map((t) => t.slice(0, Math.max(1, t.length - 2))), weight: 1 },
    { arbitrary: fc.integer({ min: bodyLimit - 100, max: bodyLimit + 100 }).map((n) => JSON.stringify({ pad: 'x'.repeat(n) })), weight: 1 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 60 }), weight: 1 },
  );
}

/** A value for a path parameter: one of `known` (ids that exist), or anything. */
const pathValue = (known: unknown[]) =>
  fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, { arbitrary: anyString.map((s) => pct(s)), weight: 2 }, { arbitrary: nasty, weight: 1 });

function queryOf(op: Operation, ctx: RequestContext): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === 'query');
  const pairs = fc.tuple(
    ...params.map((p) =>
      onceIn(
        2,
        fc.oneof(valueFor(p.schema, ctx.known), anyString).map((v) => `${p.name}=${pct(asText(v))}`),
      ),
    ),
    onceIn(
      8,
      fc.tuple(anyString, anyString).map(([k, v]) => `${pct(k)}=${pct(v)}`),
    ),
    onceIn(
      8,
      nasty.map((v) => `${params[0]?.name ?? 'x'}=${v}`),
    ),
  );
  return pairs.map((list) => {
    const present = list.filter((x): x is string => x !== undefined);
    return present.length ? `?${present.join('&')}` : '';
  });
}

export interface RequestContext {
  /** Values that exist (job ids, thread ids, graphs), by parameter or body field name. */
  known: Examples;
  /** Authorization and X-Api-Key header sets to pick from. */
  auth: Array<Record<string, string>>;
  bodyLimit: number;
}

/**
 * A path parameter as a segment that reaches the route: `.` and `..` (also as `%2E`) are dot
 * segments, which URL parsing (the client's, before anything is sent) resolves away, so
 * `/assistants/..` would be a request for `/`. No client can send them as a value; `../`, with its
 * slash encoded, is the nearest one that can, and the server receives it as the parameter.
 */
const segment = (value: string) => (value === '.' || value === '..' ? `${value}%2F` : value);

/** Requests for `op`: path, query, headers, body and its encoding all generated. */
export function requestOf(op: Operation, ctx: RequestContext): fc.Arbitrary<InjectOptions> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const path = fc
    .tuple(...pathParams.map((p) => pathValue(ctx.known[p.name] ?? ['x'])))
    .map((values) => pathParams.reduce((url, p, i) => url.replace(`{${p.name}}`, segment(String(values[i]))), op.path));
  const headerParams = op.parameters.filter((p) => p.in === 'header');
  const headers = fc.tuple(
    fc.constantFrom(...ctx.auth),
    fc.tuple(
      ...headerParams.map((p) =>
        onceIn(
          3,
          fc.oneof(valueFor(p.schema), anyString).map((v) => [p.name, asText(v)] as const),
        ),
      ),
    ),
    onceIn(10, fc.constantFrom('gzip', 'br', 'identity', 'x-unknown')),
    onceIn(3, fc.constantFrom('application/json', 'text/html', '*/*', 'image/png')),
  );
  const hasBody = op.method !== 'GET' && op.method !== 'HEAD';
  const body = hasBody
    ? fc.oneof({ arbitrary: fc.tuple(bodyTextOf(op.body, ctx.known, ctx.bodyLimit), encodings), weight: 9 }, { arbitrary: fc.constant(undefined), weight: 1 })
    : fc.constant(undefined);
  return fc.tuple(path, queryOf(op, ctx), headers, body).map(([p, query, [auth, params, contentEncoding, accept], b]) => {
    const h: Record<string, string> = { ...auth };
    for (const pair of params) if (pair) h[pair[0]] = pair[1].replace(/[^\t\x20-\x7e]/g, '?');
    if (contentEncoding) h['content-encoding'] = contentEncoding;
    if (accept) h.accept = accept;
    if (b?.[1].contentType) h['content-type'] = b[1].contentType;
    return { method: op.method as InjectOptions['method'], url: `${p}${query}`, headers: h, ...(b ? { payload: b[1].encode(b[0]) } : {}) };
  });
}
