import { isDeepStrictEqual } from 'node:util';
import type { CustomAuth } from '@runledger/runtime';
import type { FastifyRequest } from 'fastify';
import { AuthRefused, authUserOf, refusalOf } from '../security';

/** A filter an `on(…)` handler returns: metadata key → value, `{ $eq }` or `{ $contains }`. */
export type AuthFilters = Record<string, unknown>;

/**
 * Runs the project's handler of `resource:action` (else `resource`, `*:action`, `*`, as
 * LangGraph's server picks it) with `value`, which the handler may change (owner stamping).
 * Returns its filter; undefined without custom auth, without a handler, or for null/true.
 * false → 403; another non-object → 500; a throw → its HTTPException status, else 500.
 */
export async function authorize(auth: CustomAuth | undefined, request: FastifyRequest, event: string, value: unknown): Promise<AuthFilters | undefined> {
  const context = authUserOf(request);
  const callbacks = auth?.['~handlerCache'].callbacks;
  if (!callbacks || !context) return undefined;
  const [resource = '', action = ''] = event.split(':');
  const key = [event, resource, `*:${action}`, '*'].find((k) => Object.hasOwn(callbacks, k));
  const handler = key === undefined ? undefined : callbacks[key];
  if (!handler) return undefined;
  let result: unknown;
  try {
    result = await handler({ event, resource, action, value, permissions: context.scopes, user: context.user });
  } catch (err) {
    const refusal = refusalOf(err, event);
    if (refusal.status >= 500) request.log.error({ err }, `custom auth: the ${event} handler threw`);
    throw refusal;
  }
  if (result === undefined || result === null || result === true) return undefined;
  if (result === false) throw new AuthRefused(403, 'Forbidden');
  if (typeof result !== 'object' || Array.isArray(result))
    throw new AuthRefused(500, `The custom auth ${event} handler returned ${typeof result}; expected a filter object, null, undefined or a boolean.`);
  return result as AuthFilters;
}

/** Whether metadata matches a filter, as LangGraph's server judges it (a `$contains` list: every element). */
export function matchesFilters(metadata: Record<string, unknown> | undefined, filters: AuthFilters | undefined): boolean {
  if (!filters) return true;
  for (const [key, want] of Object.entries(filters)) {
    const have = metadata?.[key];
    if (typeof want === 'object' && want !== null && ('$eq' in want || '$contains' in want)) {
      const w = want as { $eq?: unknown; $contains?: unknown };
      if ('$eq' in w) {
        if (!isDeepStrictEqual(have, w.$eq)) return false;
      } else if (!Array.isArray(have) || ![w.$contains].flat().every((v) => have.some((h) => isDeepStrictEqual(h, v)))) return false;
    } else if (!isDeepStrictEqual(have, want)) return false;
  }
  return true;
}

/**
 * A filter as the JSON a `metadata @> …` search takes, merged with the client's own metadata
 * filter; null when the two ask different values of one key (nothing can match both).
 */
export function containmentOf(asked: Record<string, unknown> | undefined, filters: AuthFilters): Record<string, unknown> | null {
  const merged: Record<string, unknown> = { ...asked };
  for (const [key, want] of Object.entries(filters)) {
    const w = want as { $eq?: unknown; $contains?: unknown } | null;
    const value =
      typeof w === 'object' && w !== null && '$eq' in w ? w.$eq : typeof w === 'object' && w !== null && '$contains' in w ? [w.$contains].flat() : want;
    if (Object.hasOwn(merged, key) && !isDeepStrictEqual(merged[key], value)) return null;
    merged[key] = value;
  }
  return merged;
}
