import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';

/** The part of a LangGraph CLI config (`langgraph.json`) Runledger reads; other keys are ignored. */
/** langgraph.json's `http.cors`, as the LangGraph CLI documents it. */
const Cors = z.object({
  allow_origins: z.array(z.string()).optional(),
  allow_origin_regex: z.string().optional(),
  allow_methods: z.array(z.string()).optional(),
  allow_headers: z.array(z.string()).optional(),
  allow_credentials: z.boolean().optional(),
  expose_headers: z.array(z.string()).optional(),
  max_age: z.number().int().min(0).optional(),
});
export type LangGraphCors = z.infer<typeof Cors>;

/** langgraph.json's `store`: the semantic index (`embed`: `./file.ts:export` or `provider:model`) and ttls (minutes), as LangGraph's config has them. */
const Store = z.object({
  index: z
    .object({
      embed: z.string().min(1),
      dims: z.number().int().min(1).max(16_000),
      fields: z.array(z.string().min(1)).min(1).optional(),
    })
    .optional(),
  ttl: z
    .object({
      refresh_on_read: z.boolean().default(true),
      default_ttl: z.number().positive().nullable().optional(),
      sweep_interval_minutes: z.number().positive().nullable().optional(),
    })
    .optional(),
});
export type LangGraphStore = z.infer<typeof Store>;

const LangGraphConfig = z.object({
  graphs: z.record(z.string(), z.union([z.string().min(1), z.object({ path: z.string().min(1), description: z.string().optional() })])),
  env: z.union([z.record(z.string(), z.string()), z.string().min(1)]).optional(),
  http: z.object({ cors: Cors.optional() }).loose().optional(),
  auth: z
    .object({ path: z.string().min(1).optional() })
    .loose()
    .optional(),
  store: Store.optional(),
});

const GRAPH_ID = /^[A-Za-z0-9_.-]{1,100}$/;

/** One `graphs` entry: `./src/agent.ts:graph` split into an absolute file and an export name. */
export interface GraphEntry {
  id: string;
  /** The entry as written, for messages. */
  spec: string;
  file: string;
  /** `default` when the entry names no export. */
  exportName: string;
  description?: string;
}

export interface LangGraphProject {
  configPath: string;
  graphs: GraphEntry[];
  /** The variables of `env` (an object, or a .env file relative to the config). */
  env: Record<string, string>;
  /** `http.cors`: which browser origins may call the API. */
  cors?: LangGraphCors;
  /** `auth.path`: the module and export of the project's `Auth` object (custom auth). */
  auth?: { spec: string; file: string; exportName: string };
  /** `store`: the store's index and ttls (loadStoreConfig resolves `embed`). */
  store?: LangGraphStore;
}

/** The config to load: `explicit` (RUNLEDGER_CONFIG) when given, else `langgraph.json` in `cwd` when there is one. */
export function findLangGraphConfig(explicit: string | undefined, cwd: string): string | undefined {
  if (explicit) return path.resolve(cwd, explicit);
  const found = path.join(cwd, 'langgraph.json');
  return existsSync(found) ? found : undefined;
}

/** `./src/agent.ts:graph` → the absolute file and the export; the last colon splits (`default` without one). */
function splitSpec(dir: string, spec: string): { file: string; exportName: string } {
  const colon = spec.lastIndexOf(':');
  const [file, exportName] = colon > 0 ? [spec.slice(0, colon), spec.slice(colon + 1)] : [spec, 'default'];
  return { file: path.resolve(dir, file), exportName: exportName || 'default' };
}

/** Reads and checks a langgraph.json. Throws one readable line naming the file and what is wrong. */
export function readLangGraphConfig(configPath: string): LangGraphProject {
  const where = `langgraph config ${configPath}`;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(configPath, 'utf8'));
  } catch (err) {
    throw new Error(`${where} cannot be read: ${oneLine(err)}`, { cause: err });
  }
  const parsed = LangGraphConfig.safeParse(raw);
  if (!parsed.success) {
    throw new Error(`${where}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  const badId = Object.keys(parsed.data.graphs).find((id) => !GRAPH_ID.test(id));
  if (badId !== undefined)
    throw new Error(`${where}: graph id "${badId}" must be 1 to 100 letters, digits, \`_\`, \`.\` or \`-\` (it names the graph in every job).`);
  const dir = path.dirname(configPath);
  const graphs = Object.entries(parsed.data.graphs).map(([id, value]) => {
    const spec = typeof value === 'string' ? value : value.path;
    // `file:export`; the last colon splits, so a path may hold one (`C:\…` never reaches Linux, but costs nothing).
    const description = typeof value === 'string' ? undefined : value.description;
    return { id, spec, ...splitSpec(dir, spec), description };
  });
  const env = parsed.data.env;
  const cors = parsed.data.http?.cors;
  const authSpec = parsed.data.auth?.path;
  const auth = authSpec === undefined ? undefined : { spec: authSpec, ...splitSpec(dir, authSpec) };
  const store = parsed.data.store;
  if (typeof env !== 'string') return { configPath, graphs, env: env ?? {}, cors, auth, store };
  const envFile = path.resolve(dir, env);
  try {
    return { configPath, graphs, env: parseEnv(readFileSync(envFile, 'utf8')) as Record<string, string>, cors, auth, store };
  } catch (err) {
    throw new Error(`${where}: env file ${envFile} cannot be read: ${oneLine(err)}`, { cause: err });
  }
}

/**
 * Sets the config's `env` in `target` (process.env) before the graphs load, as `langgraph dev`
 * does. A variable already set wins: the deployment's environment overrides the project's defaults.
 */
export function applyProjectEnv(env: Record<string, string>, target: NodeJS.ProcessEnv): void {
  for (const [name, value] of Object.entries(env)) if (target[name] === undefined || target[name] === '') target[name] = value;
}

/** The first line of an error's message: start-up failures are one line. */
export function oneLine(err: unknown): string {
  return (((err as Error)?.message ?? String(err)).split('\n').find((l) => l.trim() !== '') ?? '').trim();
}
