import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';

const doc = { tags: ['langgraph'] };

/** The `version` of a package.json, undefined when it cannot be read (as LangGraph's server reports a version it cannot determine). */
function versionOf(read: () => string): string | undefined {
  try {
    return (JSON.parse(read()) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/**
 * The server's description as LangGraph's JS server answers GET /info (agent-chat-ui calls it
 * on load to see that the server is up): Runledger's version, the LangGraph.js it runs, and which
 * features it serves (`crons`: /runs/crons, on the ledger's crons).
 */
export function serverInfo() {
  return {
    version: versionOf(() => readFileSync(new URL('../../package.json', import.meta.url), 'utf8')),
    langgraph_js_version: versionOf(() => readFileSync(createRequire(import.meta.url).resolve('@langchain/langgraph/package.json'), 'utf8')),
    context: 'js',
    flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: true },
  };
}

/** GET /info and GET /ok, as LangGraph's server answers them. */
export async function metaRoutes(app: FastifyInstance): Promise<void> {
  const info = serverInfo();
  app.get('/info', { schema: { ...doc, summary: "The server's version and the features it serves" } }, async () => info);
  app.get('/ok', { schema: { ...doc, summary: 'Liveness, as LangGraph answers it: { ok: true }', security: [] } }, async () => ({ ok: true }));
}
