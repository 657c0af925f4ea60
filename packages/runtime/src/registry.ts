import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StateSnapshot } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { definitionFromExport, type Notice } from './graph-export';
import { approvalGraph } from './graphs/approval';
import { chatGraph } from './graphs/chat';
import { echoGraph } from './graphs/echo';
import { vacationGraph } from './graphs/vacation';
import { applyProjectEnv, oneLine, readLangGraphConfig } from './langgraph-config';
import { ensurePlatformLogger } from './platform-logger';

/** The calls Runledger makes on a compiled graph (`stream` for runs a LangGraph API client streams). */
export interface RunnableGraph {
  invoke(input: unknown, config: Record<string, unknown>): Promise<unknown>;
  stream?(input: unknown, config: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  /** LangChain's `streamEvents` (version v2), for the LangGraph API's `events` stream mode. */
  streamEvents?(input: unknown, config: Record<string, unknown> & { version: 'v2' }): AsyncIterable<unknown>;
  getState(config: { configurable: Record<string, unknown> }): Promise<StateSnapshot>;
  /**
   * LangGraph's output channels of `invoke` (a compiled graph's `streamChannelsAsIs`). When it is
   * a list, the worker takes a finished run's result from `invoke` instead of reading the state
   * back; a wrapper around a compiled graph must pass it on.
   */
  readonly streamChannelsAsIs?: unknown;
}

/** How strictly admission checks an input. */
export interface InputCheckOptions {
  /**
   * Let fields the graph has no channel for pass (LangGraph drops them, and LangGraph API clients
   * such as agent-chat-ui send `messages` to every graph). Default false: `/v1/jobs` refuses them.
   */
  ignoreUnknownFields?: boolean;
}

/** A graph Runledger can run by name. */
export interface GraphDefinition {
  name: string;
  description: string;
  /** Compiles the graph with the attempt's (fenced) checkpointer. */
  build(checkpointer: BaseCheckpointSaver): RunnableGraph;
  /** A readable reason when `input` is unusable, undefined when it is fine. Checked at admission. */
  validateInput?(input: unknown, options?: InputCheckOptions): string | undefined;
  /**
   * The graph's version: admission records it and only workers serving it run the job. Default
   * the deployment's (`LoadGraphsOptions.buildId`, i.e. RUNLEDGER_BUILD_ID, else the project's
   * package.json version); loadGraphs always sets it.
   */
  version?: string;
  /**
   * Upgrade policy: the versions whose checkpoints this version may resume (an operator's
   * `upgrade` moves their jobs here without replay). Default none: `pinned`.
   */
  resumes?: readonly string[];
  /**
   * Where the graph's export is written (langgraph.json's entry): the file and the export's name.
   * The LangGraph API reads the TypeScript types of an Annotation state from it for the graph's
   * JSON schemas, as LangGraph's server does. Absent for graphs given in code.
   */
  source?: { file: string; exportName: string };
}

export type GraphRegistry = ReadonlyMap<string, GraphDefinition>;

export const builtInGraphs: readonly GraphDefinition[] = [echoGraph, vacationGraph, approvalGraph, chatGraph];

export interface LoadGraphsOptions {
  /** RUNLEDGER_GRAPHS: a module exporting `graphs` (or a default), an array of GraphDefinition. */
  modulePath?: string;
  /** A langgraph.json (RUNLEDGER_CONFIG, or findLangGraphConfig): its graphs are served by id. */
  configPath?: string;
  /** Where the config's `env` goes before its graphs load. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Told when an export's own checkpointer is set aside. Default: a line on stderr. */
  notice?: Notice;
  /** RUNLEDGER_BUILD_ID: the version of every graph that declares none. Default the version in ./package.json, else `0`. */
  buildId?: string;
  /** GraphDefinitions given in code (createWorker's and createServer's `graphs`). */
  extra?: readonly GraphDefinition[];
  /**
   * RUNLEDGER_BUILTIN_GRAPHS: serve the built-in demo graphs (echo, vacation, approval, chat) too.
   * Default: only when no other source (config, module, `extra`) gives graphs.
   */
  builtIns?: boolean;
}

/**
 * Every graph of the langgraph.json, of the RUNLEDGER_GRAPHS module and of `extra`, plus the
 * built-in graphs when asked for (or when nothing else gives one). Throws one readable line naming
 * the module or the config entry that cannot be loaded (missing file, missing export, not a
 * graph), or the two sources that give one id.
 */
export async function loadGraphs(options: LoadGraphsOptions | string = {}): Promise<GraphRegistry> {
  const o = typeof options === 'string' ? { modulePath: options } : options;
  // Graphs written for LangGraph Platform take its global logger at import time.
  ensurePlatformLogger();
  const sources: Array<[source: string, graphs: readonly GraphDefinition[]]> = [];
  if (o.configPath) {
    const notice = o.notice ?? ((m: string) => console.error(`runledger: ${m}`));
    sources.push([o.configPath, await loadProjectGraphs(o.configPath, o.env ?? process.env, notice)]);
  }
  if (o.modulePath) sources.push([`RUNLEDGER_GRAPHS=${o.modulePath}`, await loadModuleGraphs(o.modulePath)]);
  if (o.extra?.length) sources.push(['the graphs given in code', o.extra]);
  if (o.builtIns ?? sources.length === 0) sources.unshift(['the built-in demo graphs (RUNLEDGER_BUILTIN_GRAPHS)', builtInGraphs]);
  const fallback = o.buildId ?? projectVersion(process.cwd());
  const all = new Map<string, GraphDefinition>();
  const sourceOf = new Map<string, string>();
  for (const [source, graphs] of sources) {
    for (const g of graphs) {
      const other = sourceOf.get(g.name);
      if (other !== undefined && other !== source) {
        throw new Error(`graph "${g.name}" is given by two sources, ${other} and ${source}: rename one of them.`);
      }
      sourceOf.set(g.name, source);
      all.set(g.name, g.version === undefined ? { ...g, version: fallback } : g);
    }
  }
  return all;
}

/** The deployment's version when a graph declares none: `version` of the package.json in `dir`, else `0`. */
export function projectVersion(dir: string): string {
  try {
    const version = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
    return typeof version === 'string' && version !== '' ? version : '0';
  } catch {
    return '0';
  }
}

async function loadModuleGraphs(modulePath: string): Promise<GraphDefinition[]> {
  let mod: Record<string, unknown>;
  try {
    mod = await import(pathToFileURL(modulePath).href);
  } catch (err) {
    throw new Error(`RUNLEDGER_GRAPHS=${modulePath} could not be loaded: ${(err as Error).message}`, { cause: err });
  }
  const list = (mod.graphs ?? mod.default) as unknown;
  if (!Array.isArray(list) || !list.every((g) => typeof g?.name === 'string' && typeof g?.build === 'function')) {
    throw new Error(`RUNLEDGER_GRAPHS=${modulePath} must export \`graphs\` (or a default): an array of { name, description, build(checkpointer) }.`);
  }
  return list as GraphDefinition[];
}

export const TYPESCRIPT = /\.(ts|mts|cts|tsx)$/;
let tsxRegistered = false;

/** Lets `import()` load TypeScript, as `langgraph dev` does: tsx's loader, if installed (the runledger CLI brings it). `named` says what needs it. */
export async function registerTypeScript(named: string): Promise<void> {
  if (tsxRegistered) return;
  let api: { register(): unknown };
  try {
    api = await import('tsx/esm/api');
  } catch (err) {
    throw new Error(`${named} is TypeScript, which needs tsx to load: npm install tsx, or point the entry at built JavaScript.`, {
      cause: err,
    });
  }
  api.register();
  tsxRegistered = true;
}

async function loadProjectGraphs(configPath: string, env: NodeJS.ProcessEnv, notice: Notice): Promise<GraphDefinition[]> {
  const project = readLangGraphConfig(configPath);
  // The graphs' modules may read their variables at import time.
  applyProjectEnv(project.env, env);
  const modules = new Map<string, Record<string, unknown>>();
  const definitions: GraphDefinition[] = [];
  for (const entry of project.graphs) {
    const named = `langgraph.json graph "${entry.id}" (${entry.spec})`;
    if (!existsSync(entry.file)) throw new Error(`${named}: file ${entry.file} does not exist.`);
    if (TYPESCRIPT.test(entry.file)) await registerTypeScript(named);
    let mod = modules.get(entry.file);
    if (!mod) {
      try {
        mod = (await import(pathToFileURL(entry.file).href)) as Record<string, unknown>;
      } catch (err) {
        throw new Error(`${named}: ${entry.file} could not be loaded: ${oneLine(err)}`, { cause: err });
      }
      modules.set(entry.file, mod);
    }
    if (!(entry.exportName in mod)) {
      const exported = Object.keys(mod).filter((k) => k !== '__esModule');
      throw new Error(`${named}: ${entry.file} has no export "${entry.exportName}" (it exports: ${exported.join(', ') || 'nothing'}).`);
    }
    definitions.push(await definitionFromExport(entry, mod[entry.exportName], notice));
  }
  return definitions;
}
