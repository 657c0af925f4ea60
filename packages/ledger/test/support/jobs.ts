// Small recipes shared by the ledger's integration tests: drive a job into a given state
// through the public verbs, read back everything a write could have touched, and open
// enough pool connections up front that concurrent calls really run side by side.
import pg from 'pg';
import { sleep, type TestDb } from '../../../../test/support/db';
import { type AdmitRequest, createPool, type Job, type JobStatus, Ledger } from '../../src/index';

/** A job driven into `status` through the public verbs only, plus the token of its last claim. */
export async function jobIn(ledger: Ledger, status: JobStatus, req: Partial<AdmitRequest> = {}): Promise<{ job: Job; token: number }> {
  const { job } = await ledger.admit({ graph: 'echo', input: {}, ...req });
  const id = job.jobId;
  if (status === 'accepted') return { job, token: 0 };
  if (status === 'cancelled') return { job: await ledger.cancel(id), token: 0 };
  const claim = await ledger.claim(id, 'setup-worker', 600_000);
  if (!claim.ok) throw new Error(`setup claim of ${id} refused: ${claim.reason}`);
  const token = claim.job.fencingToken;
  const run: Record<Exclude<JobStatus, 'accepted' | 'cancelled'>, () => Promise<unknown>> = {
    starting: async () => {},
    running: () => ledger.recordCheckpoint(id, token),
    interrupted: () => ledger.park(id, token, { question: 'ok?' }),
    recovery_required: () => ledger.release(id, token),
    manual_reconcile: () => ledger.requireManual(id, token, 'effect_in_doubt'),
    completed: () => ledger.complete(id, token, { done: true }),
    failed: () => ledger.fail(id, token, { message: 'boom' }),
  };
  await run[status]();
  const now = await ledger.get(id);
  if (now.status !== status) throw new Error(`setup wanted ${status}, job ${id} is ${now.status}`);
  return { job: now, token };
}

export interface JobSnapshot {
  job: Record<string, unknown> | undefined;
  events: Record<string, unknown>[];
  effects: Record<string, unknown>[];
}

/** The raw job row, its events and its effects: everything a fenced write may change. */
export async function snapshot(pool: pg.Pool, jobId: string): Promise<JobSnapshot> {
  const [job, events, effects] = await Promise.all([
    pool.query('SELECT * FROM jobs WHERE job_id = $1', [jobId]),
    pool.query('SELECT * FROM job_events WHERE job_id = $1 ORDER BY event_id', [jobId]),
    pool.query('SELECT * FROM effects WHERE job_id = $1 ORDER BY effect_key', [jobId]),
  ]);
  return { job: job.rows[0], events: events.rows, effects: effects.rows };
}

/** Opens `n` connections at once and returns them to the pool, so the next `n` queries run in parallel. */
export async function warmPool(pool: pg.Pool, n: number): Promise<void> {
  const got = await Promise.allSettled(Array.from({ length: n }, () => pool.connect()));
  // Hand back what was opened even when some failed, or pool.end() would wait for them forever.
  for (const g of got) if (g.status === 'fulfilled') g.value.release();
  const failed = got.find((g) => g.status === 'rejected');
  if (failed) throw failed.reason;
}

const WIDE_POOL_LOCK = 'runledger.test.wide-pool';

/**
 * Runs `fn` with a ledger on its own pool of `size` open connections, for tests that need that
 * many queries truly in parallel. The server's connection slots are shared by every suite, so
 * only one wide pool exists at a time (an advisory lock, across files and processes) and it is
 * closed as soon as `fn` ends. While other suites hold the slots it waits and tries again.
 */
export async function withWidePool<T>(db: TestDb, size: number, fn: (ledger: Ledger) => Promise<T>): Promise<T> {
  const lock = new pg.Client({ connectionString: db.url });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [WIDE_POOL_LOCK]);
    const pool = createPool({ connectionString: db.url, schema: db.schema, max: size });
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          await warmPool(pool, size);
          break;
        } catch (err) {
          // 53300: too many clients. Other suites hold the slots now; they give them back soon.
          if ((err as { code?: string }).code !== '53300' || attempt >= 30) throw err;
          await sleep(1_000);
        }
      }
      return await fn(new Ledger(pool, { leaseTtlMs: db.ledger.leaseTtlMs }));
    } finally {
      await pool.end();
    }
  } finally {
    await lock.end();
  }
}

export { backdateLease } from '../../../../test/support/db';

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
}

/** A promise the test resolves, to hold one side of an interleaving at a chosen point. */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Settles within `ms`, or reports that it was still pending. */
export async function settledWithin<T>(p: Promise<T>, ms: number): Promise<'pending' | PromiseSettledResult<T>> {
  const timeout = new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms));
  const settled = p.then(
    (value): PromiseSettledResult<T> => ({ status: 'fulfilled', value }),
    (reason): PromiseSettledResult<T> => ({ status: 'rejected', reason }),
  );
  return Promise.race([settled, timeout]);
}
