import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StoreIndex, StoreTtl } from '@runledger/ledger';
import { type LangGraphStore, oneLine, readLangGraphConfig } from './langgraph-config';
import { registerTypeScript, TYPESCRIPT } from './registry';

/** langgraph.json `store`, resolved: what every LedgerStore of producer and workers is given. */
export interface StoreConfig {
  index?: StoreIndex;
  ttl?: StoreTtl & { sweepIntervalMinutes: number };
}

type Embed = (texts: string[]) => Promise<number[][]>;
/** A LangChain `Embeddings` (what LangGraph's stores take). */
interface Embeddings {
  embedDocuments(texts: string[]): Promise<number[][]>;
}
const isEmbeddings = (v: unknown): v is Embeddings => typeof (v as Embeddings | undefined)?.embedDocuments === 'function';

/** `embed` as a function: an exported function of texts, or a LangChain Embeddings object (or a class of one). */
function asEmbed(value: unknown, named: string): Embed {
  if (isEmbeddings(value)) return (texts) => value.embedDocuments(texts);
  if (typeof value === 'function') {
    if (isEmbeddings(value.prototype)) {
      const made = new (value as new () => Embeddings)();
      return (texts) => made.embedDocuments(texts);
    }
    return async (texts) => await (value as Embed)(texts);
  }
  throw new Error(`${named} must export a function (texts: string[]) => number[][] or a LangChain Embeddings.`);
}

/** `provider:model` (LangGraph's init_embeddings form): the provider's LangChain package, when installed. */
async function providerEmbed(provider: string, model: string, named: string): Promise<Embed> {
  if (provider !== 'openai')
    throw new Error(`${named}: provider "${provider}" is not supported; use "openai:<model>" or a module's function ("./embed.ts:embed").`);
  let mod: { OpenAIEmbeddings: new (o: { model: string }) => Embeddings };
  try {
    mod = (await import('@langchain/openai' as string)) as typeof mod;
  } catch (err) {
    throw new Error(`${named} needs the package @langchain/openai: npm install @langchain/openai.`, { cause: err });
  }
  return asEmbed(new mod.OpenAIEmbeddings({ model }), named);
}

async function loadEmbed(spec: string, dir: string): Promise<Embed> {
  const named = `langgraph.json store.index.embed (${spec})`;
  const colon = spec.lastIndexOf(':');
  const [file, exportName] = colon > 0 ? [spec.slice(0, colon), spec.slice(colon + 1) || 'default'] : [spec, 'default'];
  const isPath = file.startsWith('.') || file.startsWith('/') || /\.[cm]?[jt]sx?$/.test(file);
  if (!isPath) return providerEmbed(file, exportName, named);
  const absolute = path.resolve(dir, file);
  if (!existsSync(absolute)) throw new Error(`${named}: file ${absolute} does not exist.`);
  if (TYPESCRIPT.test(absolute)) await registerTypeScript(named);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${named}: ${absolute} could not be loaded: ${oneLine(err)}`, { cause: err });
  }
  if (!(exportName in mod)) throw new Error(`${named}: ${absolute} has no export "${exportName}".`);
  return asEmbed(mod[exportName], named);
}

/** The `store` of a langgraph.json, its embedding function loaded; undefined without a config or a `store`. Throws one line naming what is wrong. */
export async function loadStoreConfig(configPath: string | undefined): Promise<StoreConfig | undefined> {
  if (!configPath) return undefined;
  const store: LangGraphStore | undefined = readLangGraphConfig(configPath).store;
  if (!store) return undefined;
  const config: StoreConfig = {};
  if (store.index) {
    const { dims, fields, embed } = store.index;
    config.index = { dims, fields, embed: await loadEmbed(embed, path.dirname(configPath)) };
  }
  if (store.ttl) {
    const t = store.ttl;
    config.ttl = { refreshOnRead: t.refresh_on_read, defaultMinutes: t.default_ttl ?? undefined, sweepIntervalMinutes: t.sweep_interval_minutes ?? 60 };
  }
  return config;
}
