import { AsyncLocalStorage } from 'node:async_hooks';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { Checkpoint, CheckpointMetadata, PendingWrite } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import { LeaseLostError } from './errors';
import type { Ledger } from './ledger';

type FenceCheck = (client: pg.PoolClient) => Promise<void>;

/** The fence of the saver call in progress; read by the wrapped client at COMMIT. */
const currentFence = new AsyncLocalStorage<FenceCheck>();

/** A client whose COMMIT first runs the fence check of the saver call that opened it. */
function fencedClient(client: pg.PoolClient): pg.PoolClient {
  const query = client.query.bind(client) as (text: string, values?: unknown[]) => Promise<unknown>;
  const wrapped = async (text: string, values?: unknown[]) => {
    const check = currentFence.getStore();
    if (text === 'COMMIT' && check) await check(client);
    return query(text, values);
  };
  return new Proxy(client, { get: (target, prop, receiver) => (prop === 'query' ? wrapped : Reflect.get(target, prop, receiver)) });
}

/** A pool whose clients carry the fence into PostgresSaver's own transactions. */
function fencingPool(pool: pg.Pool): pg.Pool {
  const connect = async () => fencedClient(await pool.connect());
  // Every other member runs on the real pool: pg-pool's query() (the saver's reads) calls
  // this.connect(callback), which the promise-only connect above would never answer.
  return new Proxy(pool, {
    get: (target, prop) => {
      if (prop === 'connect') return connect;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export interface Fence {
  jobId: string;
  fencingToken: number;
}

/**
 * PostgresSaver for one attempt of one job. Each checkpoint and pending-write transaction
 * checks the fencing token (holding a share lock on the job row) just before COMMIT and
 * rolls back with `LeaseLostError` when it is stale. The attempt's first checkpoint moves
 * the job starting → running in that same transaction.
 */
export class FencedPostgresSaver extends PostgresSaver {
  /** Checkpoint or write transactions this saver rolled back because the lease was lost. */
  rejectedWrites = 0;
  private running: boolean;

  constructor(
    private readonly ledger: Ledger,
    private readonly fence: Fence,
    options: { schema?: string; alreadyRunning?: boolean } = {},
  ) {
    super(fencingPool(ledger.pool), undefined, { schema: options.schema ?? 'public' });
    this.running = options.alreadyRunning ?? false;
  }

  private readonly check: FenceCheck = async (client) => {
    const { jobId, fencingToken } = this.fence;
    if (!this.running && (await this.ledger.recordCheckpoint(jobId, fencingToken, client))) {
      this.running = true;
      return;
    }
    if (await this.ledger.checkFence(jobId, fencingToken, client)) {
      this.running = true;
      return;
    }
    this.rejectedWrites++;
    throw new LeaseLostError(jobId, fencingToken, 'checkpoint write');
  };

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: Record<string, string | number>,
  ): Promise<RunnableConfig> {
    return currentFence.run(this.check, () => super.put(config, checkpoint, metadata, newVersions));
  }

  override putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    return currentFence.run(this.checkWrites, () => super.putWrites(config, writes, taskId));
  }

  /** Pending writes never make the starting → running move: only a checkpoint does. */
  private readonly checkWrites: FenceCheck = async (client) => {
    if (await this.ledger.checkFence(this.fence.jobId, this.fence.fencingToken, client)) return;
    this.rejectedWrites++;
    throw new LeaseLostError(this.fence.jobId, this.fence.fencingToken, 'pending write');
  };
}
