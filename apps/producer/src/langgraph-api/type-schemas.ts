import { Worker } from 'node:worker_threads';
import type { GraphRegistry } from '@runledger/runtime';
import type { GraphSchemas } from './graph-schemas';

/**
 * LangGraph's own extractor of a graph's schemas from its TypeScript types (what its server and
 * `langgraph dev` answer for an Annotation state, whose types do not exist at run time): an
 * optional peer dependency. Without it, such a graph's fields stay untyped.
 */
const LIBRARY = '@langchain/langgraph-api/schema';
const TYPESCRIPT = /\.[cm]?tsx?$/;
/** LangGraph's server's limit (its LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS) is 30 s; one batch here reads every graph. */
const DEFAULT_TIMEOUT_MS = 120_000;

// The extractor runs in a thread of its own (it type-checks the project for seconds), told to stay
// there (its own thread would print the compiler's diagnostics on the producer's stdout).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.library)
  .then((lib) => lib.getStaticGraphSchema(workerData.specs, { mainThread: true }))
  .then((result) => parentPort.postMessage({ result }), (err) => parentPort.postMessage({ error: String((err && err.stack) || err) }));
`;

type Extracted = Record<string, Record<string, Partial<GraphSchemas>>>;
type Log = { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };

function resolveLibrary(): string | undefined {
  try {
    return import.meta.resolve(LIBRARY);
  } catch {
    return undefined;
  }
}

const complete = (s: Partial<GraphSchemas>): GraphSchemas => ({
  input: s.input ?? null,
  output: s.output ?? null,
  state: s.state ?? null,
  config: s.config ?? null,
});

/**
 * The rounds of extraction: the TypeScript graphs, at most one per file in each round (the
 * extractor writes one augmented copy of a file per program, so two exports of one file need two).
 */
function roundsOf(graphs: GraphRegistry, readable: (id: string) => boolean): string[][] {
  const rounds: string[][] = [];
  const seen = new Map<string, number>();
  for (const id of graphs.keys()) {
    const file = graphs.get(id)?.source?.file;
    if (file === undefined || !readable(id)) continue;
    const round = seen.get(file) ?? 0;
    seen.set(file, round + 1);
    if (round === rounds.length) rounds.push([]);
    rounds[round]?.push(id);
  }
  return rounds;
}

/**
 * The schemas of the served graphs written in TypeScript (langgraph.json entries), read from
 * their types by LangGraph's extractor on the first request that needs one, then kept: each
 * round's graphs in one program (one type check of the shared libraries), one round at a time. A
 * failure (no extractor installed, a time-out, a compiler error) is logged and leaves the round's
 * graphs untyped.
 */
export class TypeSchemas {
  private readonly rounds: string[][];
  private readonly extracted = new Map<number, Promise<Extracted>>();
  private queue: Promise<unknown> = Promise.resolve();
  private worker?: Worker;

  constructor(
    private readonly graphs: GraphRegistry,
    private readonly timeoutMs = Number(process.env.LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS) || DEFAULT_TIMEOUT_MS,
  ) {
    this.rounds = roundsOf(graphs, (id) => this.readable(id));
  }

  /** Whether `graphId` is one the extractor can read (served from a TypeScript file). */
  readable(graphId: string): boolean {
    const file = this.graphs.get(graphId)?.source?.file;
    return file !== undefined && TYPESCRIPT.test(file);
  }

  /**
   * The schemas of graph `graphId` (`namespace` undefined) or of its subgraph at `namespace`
   * (`a|b`, as getSubgraphs names it); undefined when they cannot be read.
   */
  async of(graphId: string, log: Log, namespace?: string): Promise<GraphSchemas | undefined> {
    const source = this.graphs.get(graphId)?.source;
    const round = this.rounds.findIndex((ids) => ids.includes(graphId));
    if (!source || round < 0) return undefined;
    let batch = this.extracted.get(round);
    if (!batch) {
      const next = this.queue.then(() => this.extract(this.rounds[round] ?? [], log));
      this.queue = next;
      this.extracted.set(round, next);
      batch = next;
    }
    const found = (await batch)[graphId];
    const key = namespace === undefined ? source.exportName : `${source.exportName}|${namespace}`;
    const schemas = found?.[key];
    return schemas && Object.keys(schemas).length > 0 ? complete(schemas) : undefined;
  }

  /** Stops an extraction still running (the producer's close). */
  async close(): Promise<void> {
    await this.worker?.terminate();
  }

  private async extract(ids: string[], log: Log): Promise<Extracted> {
    const library = resolveLibrary();
    if (!library) {
      log.debug({ library: LIBRARY }, 'graph schemas: TypeScript types not read (optional peer dependency not installed)');
      return {};
    }
    const specs = Object.fromEntries(
      ids.map((id) => [id, { sourceFile: this.graphs.get(id)?.source?.file, exportSymbol: this.graphs.get(id)?.source?.exportName }]),
    );
    const started = Date.now();
    try {
      const result = await this.run(library, specs, log);
      log.debug({ graphs: ids, ms: Date.now() - started }, 'graph schemas: TypeScript types read');
      return result;
    } catch (err) {
      log.warn({ err, graphs: ids }, 'graph schemas: TypeScript types could not be read; Annotation fields stay untyped');
      return {};
    }
  }

  private async run(library: string, specs: Record<string, unknown>, log: Log): Promise<Extracted> {
    const worker = new Worker(WORKER, { eval: true, workerData: { library, specs }, stdout: true, stderr: true });
    this.worker = worker;
    let diagnostics = '';
    const keep = (chunk: Buffer) => {
      if (diagnostics.length < 20_000) diagnostics += chunk.toString();
    };
    worker.stdout.on('data', keep);
    worker.stderr.on('data', keep);
    let timer: NodeJS.Timeout | undefined;
    try {
      return await new Promise<Extracted>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
        worker.once('message', (m: { result?: Extracted; error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m.result ?? {})));
        worker.once('error', reject);
        worker.once('exit', (code) => reject(new Error(`the extractor's thread exited (${code})`)));
      });
    } finally {
      clearTimeout(timer);
      if (diagnostics.trim()) log.debug({ diagnostics }, "graph schemas: the TypeScript compiler's diagnostics");
      this.worker = undefined;
      await worker.terminate();
    }
  }
}
