import { graphVersionKey, type WorkerAnnouncement } from '@runledger/ledger';
import type { GraphRegistry } from '@runledger/runtime';

/** The graphs a worker serves (`--graphs` / RUNLEDGER_WORKER_GRAPHS), each with an optional limit of jobs run at once. */
export type PoolSpec = ReadonlyMap<string, number | undefined>;

/**
 * Parses `echo,vacation:2` (a graph, or graph:limit): the pool this worker serves, with per-graph
 * concurrency limits. Throws one readable line for a malformed entry or a graph named twice.
 */
export function parsePool(spec: string): PoolSpec {
  const pool = new Map<string, number | undefined>();
  const entries = new Map<string, string>();
  for (const raw of spec.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const m = /^([^:@\s]+)(?::(\d+))?$/.exec(entry);
    const limit = m?.[2] === undefined ? undefined : Number(m[2]);
    if (!m || limit === 0) throw new Error(`RUNLEDGER_WORKER_GRAPHS: "${entry}" is not a graph name or graph:limit (limit ≥ 1), e.g. echo,vacation:2`);
    const graph = m[1] as string;
    // Which limit would hold is a guess either way: say so rather than keep one silently.
    const earlier = entries.get(graph);
    if (earlier !== undefined) throw new Error(`RUNLEDGER_WORKER_GRAPHS: "${graph}" is named twice ("${earlier}" and "${entry}"); name each graph once`);
    entries.set(graph, entry);
    pool.set(graph, limit);
  }
  if (pool.size === 0) throw new Error('RUNLEDGER_WORKER_GRAPHS: names no graph; leave it unset to serve every graph');
  return pool;
}

/**
 * The registry narrowed to the pool (every graph when `pool` is undefined). Throws naming a
 * pool graph the registry lacks, with the ones it has.
 */
export function poolGraphs(graphs: GraphRegistry, pool: PoolSpec | undefined): GraphRegistry {
  if (!pool) return graphs;
  const missing = [...pool.keys()].filter((g) => !graphs.has(g));
  if (missing.length > 0) {
    throw new Error(`RUNLEDGER_WORKER_GRAPHS names ${missing.map((g) => `"${g}"`).join(', ')}, not a graph here (graphs: ${[...graphs.keys()].join(', ')})`);
  }
  return new Map([...graphs].filter(([name]) => pool.has(name)));
}

/** What the worker announces: each graph's version key and `<graph>@*` (jobs admitted with no version), compatibility lists, limits. */
export function announcement(graphs: GraphRegistry, limits: ReadonlyMap<string, number | undefined> = new Map()): WorkerAnnouncement {
  const a: WorkerAnnouncement = { serves: [], versions: {}, resumes: {}, concurrency: {} };
  for (const [name, def] of graphs) {
    a.serves.push(graphVersionKey(name, def.version ?? null), graphVersionKey(name, null));
    if (def.version !== undefined) a.versions[name] = def.version;
    if (def.resumes?.length) a.resumes[name] = [...def.resumes];
    const limit = limits.get(name);
    if (limit !== undefined) a.concurrency[name] = limit;
  }
  return a;
}
