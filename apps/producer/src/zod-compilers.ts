import type { FastifyInstance, FastifySchema } from 'fastify';
import { type ZodType, z } from 'zod';
import { ApiError } from './http-errors';
import { envelopeProblem } from './json-body';

const PARTS: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

function isZod(schema: unknown): schema is ZodType {
  return typeof (schema as ZodType | undefined)?.safeParse === 'function';
}

/** One readable line naming each bad field, e.g. `body.graph: Invalid input: expected string`. */
export function describeZodIssues(part: string, issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((i) => {
      const keys = i.code === 'unrecognized_keys' ? ` (${(i as { keys: string[] }).keys.join(', ')})` : '';
      return `${[part, ...i.path.map(String)].join('.')}: ${i.message}${keys}`;
    })
    .join('; ');
}

/**
 * Lets routes declare zod schemas: Fastify validates requests with them (failures become
 * 400 invalid_request naming the field), serialises replies with JSON.stringify, and only the
 * JSON parser remains (text/plain, every other type and JSON in a charset other than UTF-8 answer
 * 415). A JSON body PostgreSQL cannot store or the server cannot safely walk (jsonBodyProblem)
 * answers 400 invalid_request before any route sees it, except the items of a route's
 * `config.jsonItems` list (the batch's jobs), which that route checks one by one.
 */
export function installZodCompilers(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (!isZod(schema)) throw new Error(`Route schema for ${httpPart} must be a zod schema`);
    const part = PARTS[httpPart ?? 'body'] ?? httpPart ?? 'body';
    return (data: unknown) => {
      const r = schema.safeParse(data);
      return r.success ? { value: r.data } : { error: new ApiError(400, 'invalid_request', describeZodIssues(part, r.error.issues)) };
    };
  });
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  app.removeAllContentTypeParsers();
  // JSON.parse makes `__proto__` an own field, never the prototype: jsonBodyProblem then refuses it by name.
  const parseJson = app.getDefaultJsonParser('ignore', 'ignore');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // The body was read as UTF-8: another charset would parse as garbage (or, worse, as other text).
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      return done(new ApiError(415, 'unsupported_media_type', `Send JSON as UTF-8 (charset=utf-8), not charset=${charset}.`));
    }
    // An empty body with a JSON content type means "no body" (POST /cancel from curl -H ... -X POST).
    if (body === '') return done(null, undefined);
    return parseJson(request, body as string, (err, value) => {
      if (err) return done(err);
      const problem = envelopeProblem(value, (request.routeOptions.config as { jsonItems?: string } | undefined)?.jsonItems);
      return problem ? done(new ApiError(400, 'invalid_request', problem)) : done(null, value);
    });
  });
}

function toJsonSchema(schema: unknown, io: 'input' | 'output'): unknown {
  if (!isZod(schema)) return schema;
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

/** @fastify/swagger `transform`: zod schemas become JSON Schema in /openapi.json; routes without a schema stay out. */
export function openApiTransform({ schema: routeSchema, url }: { schema: FastifySchema; url: string }): { schema: FastifySchema; url: string } {
  if (!routeSchema) return { schema: { hide: true } as FastifySchema, url };
  const schema = routeSchema as Record<string, unknown>;
  const out: Record<string, unknown> = { ...schema };
  for (const part of ['body', 'querystring', 'params', 'headers']) {
    if (schema[part]) out[part] = toJsonSchema(schema[part], 'input');
  }
  if (schema.response) {
    out.response = Object.fromEntries(Object.entries(schema.response as Record<string, unknown>).map(([code, s]) => [code, toJsonSchema(s, 'output')]));
  }
  return { schema: out, url };
}
