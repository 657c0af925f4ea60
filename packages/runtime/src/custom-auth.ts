import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { oneLine, readLangGraphConfig } from './langgraph-config';
import { registerTypeScript, TYPESCRIPT } from './registry';

/** A handler of `Auth.on(event, …)`: gets the event's value and the user; may return a filter, true/false, or throw. */
export type CustomAuthHandler = (params: {
  event: string;
  resource: string;
  action: string;
  value: unknown;
  permissions: string[];
  user: Record<string, unknown>;
}) => unknown;

/**
 * The `Auth` object of `@langchain/langgraph-sdk/auth` as the server reads it: its handler cache
 * (`authenticate` and the `on(…)` callbacks by event, resource, `*:action` or `*`).
 */
export interface CustomAuth {
  '~handlerCache': {
    authenticate?: (request: Request) => unknown;
    callbacks?: Record<string, CustomAuthHandler>;
  };
}

/**
 * The `Auth` object langgraph.json's `auth.path` names (`./auth.ts:auth`), loaded as its graphs
 * are (TypeScript through tsx); undefined when the config has no `auth.path`. Throws one readable
 * line when the file, the export or the object is wrong.
 */
export async function loadCustomAuth(configPath: string | undefined): Promise<CustomAuth | undefined> {
  if (!configPath) return undefined;
  const entry = readLangGraphConfig(configPath).auth;
  if (!entry) return undefined;
  const named = `langgraph.json auth.path (${entry.spec})`;
  if (!existsSync(entry.file)) throw new Error(`${named}: file ${entry.file} does not exist.`);
  if (TYPESCRIPT.test(entry.file)) await registerTypeScript(named);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(entry.file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${named}: ${entry.file} could not be loaded: ${oneLine(err)}`, { cause: err });
  }
  const found = mod[entry.exportName];
  if (found === undefined) throw new Error(`${named}: ${entry.file} has no export "${entry.exportName}".`);
  if (typeof found !== 'object' || found === null || !('~handlerCache' in found))
    throw new Error(`${named}: the export "${entry.exportName}" is not an Auth object of @langchain/langgraph-sdk/auth.`);
  const auth = found as CustomAuth;
  if (typeof auth['~handlerCache'].authenticate !== 'function')
    throw new Error(`${named}: the Auth object has no authenticate(…) handler, so every request would be let in.`);
  return auth;
}
