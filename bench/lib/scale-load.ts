// Loads synthetic finished jobs into a migrated schema for the scale bench (bench/scale.ts):
// jobs, four timeline events each, and a three-step LangGraph thread (checkpoints, blobs, one
// pending write) per job. Rows are generated inside PostgreSQL by INSERT … SELECT over
// generate_series, batch by batch: the same bulk path as COPY without sending gigabytes of text
// from a 2-core client. Raw SQL is fine here: this is bench scaffolding, not product code.
import type pg from 'pg';

export interface LoadShape {
  /** Jobs already in the schema from earlier calls (their numbers are skipped). */
  from: number;
  /** Jobs to add. */
  count: number;
  /** The jobs' admissions are spread evenly over this many days ending now. */
  days: number;
  /** Total jobs the days are spread over (from + count at the end of the last call). */
  total: number;
}

const BATCH = 100_000;

// $1 first job number, $2 last, $3 total jobs, $4 days. Every tenth job is `vacation`, the rest
// `echo`; 1 % failed, 0.5 % cancelled, the rest completed; job i was admitted at
// now() - days * (1 - i / total), so the newest number is the newest job.
const JOBS = `
INSERT INTO jobs (job_id, request_hash, graph, thread_id, input, status, attempt, fencing_token, result, error,
                  accepted_at, deliveries, delivery_id, enqueued_at, started_at, first_checkpoint_at, completed_at, updated_at)
SELECT 'scale-' || i, md5(i::text), CASE WHEN i % 10 = 0 THEN 'vacation' ELSE 'echo' END, 'scale-t-' || i,
       '{"steps":2}'::jsonb, s.status, 1, 1,
       CASE WHEN s.status = 'completed' THEN '{"steps":2,"ok":true}'::jsonb END,
       CASE WHEN s.status = 'failed' THEN '{"message":"synthetic failure"}'::jsonb END,
       t.at, 1, 'scale-' || i, t.at, t.at + interval '5 ms', t.at + interval '8 ms', t.at + interval '40 ms', t.at + interval '40 ms'
  FROM generate_series($1::bigint, $2::bigint) AS i
 CROSS JOIN LATERAL (SELECT now() - make_interval(secs => $4::double precision * 86400 * (1 - i::double precision / $3)) AS at) t
 CROSS JOIN LATERAL (SELECT CASE WHEN i % 100 = 7 THEN 'failed' WHEN i % 200 = 13 THEN 'cancelled' ELSE 'completed' END AS status) s`;

const EVENTS = `
INSERT INTO job_events (job_id, at, type, attempt, fencing_token, worker_id, detail)
SELECT j.job_id, j.accepted_at + e.offs, e.type, e.attempt, e.token, e.worker, e.detail
  FROM jobs j
 CROSS JOIN LATERAL (VALUES
   (interval '0 ms', 'accepted', 0, 0, NULL::text, '{}'::jsonb),
   (interval '1 ms', 'enqueued', 0, 0, NULL, '{}'::jsonb),
   (interval '5 ms', 'claimed', 1, 1, 'scale-worker', '{"from":"accepted","reason":null}'::jsonb),
   (interval '40 ms', CASE j.status WHEN 'completed' THEN 'completed' WHEN 'failed' THEN 'failed' ELSE 'cancelled' END, 1, 1, 'scale-worker', '{}'::jsonb)
 ) AS e (offs, type, attempt, token, worker, detail)
 WHERE j.job_id IN (SELECT 'scale-' || i FROM generate_series($1::bigint, $2::bigint) AS i)
 ORDER BY j.accepted_at, e.offs`;

// A three-step thread per job, as the echo graph leaves it: input, step 1, final checkpoint;
// channel blobs for the final state and one pending write left by the last step.
const CHECKPOINTS = `
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
SELECT 'scale-t-' || i, '', '1f0-' || lpad(k::text, 4, '0'), CASE WHEN k > 0 THEN '1f0-' || lpad((k - 1)::text, 4, '0') END, 'json',
       jsonb_build_object('v', 4, 'id', '1f0-' || lpad(k::text, 4, '0'), 'ts', now(),
         'channel_versions', jsonb_build_object('__start__', k, 'steps', k), 'versions_seen', '{}'::jsonb),
       jsonb_build_object('source', CASE WHEN k = 0 THEN 'input' ELSE 'loop' END, 'step', k - 1, 'parents', '{}'::jsonb, 'run_id', 'scale-' || i)
  FROM generate_series($1::bigint, $2::bigint) AS i, generate_series(0, 2) AS k`;

const BLOBS = `
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT 'scale-t-' || i, '', c, '2', 'json', convert_to('{"steps":2,"log":["step 1","step 2"]}', 'UTF8')
  FROM generate_series($1::bigint, $2::bigint) AS i, unnest(ARRAY['steps', 'log']) AS c`;

const WRITES = `
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
SELECT 'scale-t-' || i, '', '1f0-0002', 'task-' || i, 0, 'steps', 'json', convert_to('2', 'UTF8')
  FROM generate_series($1::bigint, $2::bigint) AS i`;

/** Loads jobs first…last (one batch) in one transaction. */
async function loadBatch(pool: pg.Pool, shape: LoadShape, first: number, last: number): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Bulk load: the commit's fsync once per batch, not per row.
    await client.query('SET LOCAL synchronous_commit = off');
    await client.query(JOBS, [first, last, shape.total, shape.days]);
    await client.query(EVENTS, [first, last]);
    await client.query(CHECKPOINTS, [first, last]);
    await client.query(BLOBS, [first, last]);
    await client.query(WRITES, [first, last]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Adds `shape.count` finished jobs with their events and checkpoints, in batches of 100k, `loaders`
 * batches at a time (one PostgreSQL backend each: the work is the server's, so one per core);
 * logs progress.
 */
export async function loadFinishedJobs(pool: pg.Pool, shape: LoadShape, log: (line: string) => void, loaders = 2): Promise<void> {
  let next = shape.from + 1;
  const end = shape.from + shape.count;
  const loader = async (): Promise<void> => {
    while (next <= end) {
      const first = next;
      const last = Math.min(first + BATCH - 1, end);
      next = last + 1;
      const started = Date.now();
      await loadBatch(pool, shape, first, last);
      log(`loaded jobs ${first}–${last} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  };
  await Promise.all(Array.from({ length: loaders }, loader));
}
