// Plans that stay O(1) in the size of the ledger, checked with EXPLAIN on the data that once
// made the planner pick an O(n) path:
// - list() reads a page: a filter on a graph, a status or a tenant whose rows are all older than
//   many newer jobs still reads about one page of rows (the planner assumes a value's rows are
//   spread evenly over seq; a graph idle for 20,000 newer jobs breaks that assumption);
// - a claim finds its job by key, even when a burst of completions has left 20,000 dead entries
//   in jobs_thread_open (the partial index of open jobs) that no vacuum has removed yet;
// - every fenced write finds its job by key in the plan a named statement settles on (generic),
//   not by scanning jobs_one_active_per_thread, whose predicate its status check implies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { sql } from '../src/sql';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('plans');
  // 40,000 jobs, every tenth on graph `idle`, tenant `old` and failed, then 20,000 newer `busy` jobs
  // (with fewer old rows the planner rates `idle` rare and picks its index anyway).
  await db.ledger.pool.query(`
    INSERT INTO jobs (job_id, tenant, request_hash, graph, thread_id, input, status, attempt, fencing_token, accepted_at, updated_at)
    SELECT 'p-' || i, CASE WHEN i <= 40000 AND i % 10 = 0 THEN 'old' ELSE 'default' END, md5(i::text),
           CASE WHEN i <= 40000 AND i % 10 = 0 THEN 'idle' ELSE 'busy' END, 't-' || i, '{}'::jsonb,
           CASE WHEN i <= 40000 AND i % 10 = 0 THEN 'failed' ELSE 'completed' END, 1, 1, now(), now()
      FROM generate_series(1, 60000) AS i`);
  await db.ledger.pool.query('VACUUM ANALYZE jobs');
  await db.ledger.pool.query('ALTER TABLE jobs SET (autovacuum_enabled = false)');
}, 60_000);
afterAll(() => db.close());

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Alias?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** Every node of the plan, depth first. */
const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
const isScan = (node: PlanNode) => node['Node Type'].includes('Scan');

/** Rows every scan of the plan produced or filtered out: what the page read. */
const rowsRead = (plan: PlanNode): number =>
  nodes(plan)
    .filter(isScan)
    .reduce((sum, n) => sum + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops'], 0);

async function pageCost(tenant: string | null, status: string | null, graph: string | null): Promise<{ rows: number; read: number }> {
  const { pool } = db.ledger;
  const values = [tenant, status, graph, null, null, 50];
  const rows = (await pool.query(sql('list_jobs'), values)).rowCount ?? 0;
  const plan = (await pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql('list_jobs')}`, values)).rows[0]['QUERY PLAN'][0].Plan as PlanNode;
  return { rows, read: rowsRead(plan) };
}

describe('list_jobs reads about one page whatever the filter', () => {
  it.each([
    ['graph', null, null, 'idle'],
    ['status', null, 'failed', null],
    ['tenant', 'old', null, null],
    ['tenant and graph', 'old', null, 'idle'],
    ['tenant and status', 'old', 'failed', null],
    ['no filter', null, null, null],
  ])('%s', async (_name, tenant, status, graph) => {
    const { rows, read } = await pageCost(tenant, status, graph);
    expect(rows).toBe(50);
    // The page's 50 rows from an index, then each fetched once by seq: 100, with room for a few
    // extra index entries; a scan past the 20,000 newer jobs reads hundreds of times more.
    expect(read).toBeLessThan(200);
  });
});

describe('claim_lease finds its job by key', () => {
  it('reads a few pages of jobs after a burst of completions left dead entries in jobs_thread_open', async () => {
    const { pool } = db.ledger;
    // As after a busy hour: 20,000 jobs admitted, then completed; no vacuum since.
    await pool.query(`
      INSERT INTO jobs (job_id, request_hash, graph, thread_id, input, status, accepted_at, updated_at)
      SELECT 'burst-' || i, md5(i::text), 'busy', 'burst-t-' || i, '{}'::jsonb, 'accepted', now(), now()
        FROM generate_series(1, 20000) AS i`);
    await pool.query(`UPDATE jobs SET status = 'completed', completed_at = now() WHERE status = 'accepted'`);
    const { job } = await db.ledger.admit({ graph: 'busy', input: {} });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const explained = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql('claim_lease')}`, [job.jobId, 'w', 60_000, null, null]);
      await client.query('ROLLBACK');
      const plan = explained.rows[0]['QUERY PLAN'][0].Plan as PlanNode;
      // The UPDATE's own read of jobs (alias j): the claimed row by jobs_pkey, a handful of pages.
      const target = nodes(plan).filter((n) => isScan(n) && n['Relation Name'] === 'jobs' && n.Alias === 'j');
      expect(target).toHaveLength(1);
      const pages = (target[0]!['Shared Hit Blocks'] ?? 0) + (target[0]!['Shared Read Blocks'] ?? 0);
      expect(pages).toBeLessThan(20);
    } finally {
      client.release();
    }
    // And the claim itself works on that ledger.
    const claim = await db.ledger.claim(job.jobId, 'w', 60_000);
    expect(claim.ok).toBe(true);
  });
});

/** The ledger's fenced writes: each looks its job up by job_id ($1; the heartbeat: each of $2) and checks token, status and lease. */
const FENCED = [
  'heartbeat',
  'append_event',
  'append_stream_events',
  'end_attempt',
  'put_checkpoint',
  'put_checkpoint_running',
  'put_writes',
  'record_checkpoint',
  'record_effect_intent',
  'settle_effect',
];

describe('fenced writes find their job by key', () => {
  it.each(FENCED)('%s', async (name) => {
    const client = await db.ledger.pool.connect();
    try {
      const params = Math.max(...[...sql(name).matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
      await client.query('BEGIN');
      await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE plan_probe AS ${sql(name).replace(/;\s*$/, '')}`);
      const explained = await client.query(`EXPLAIN (FORMAT JSON) EXECUTE plan_probe(${Array(params).fill('NULL').join(', ')})`);
      await client.query('ROLLBACK');
      await client.query('DEALLOCATE plan_probe');
      const plan = explained.rows[0]['QUERY PLAN'][0].Plan as PlanNode;
      // Reads of the job itself; `o` is the other jobs of its thread, found by (tenant, thread_id).
      const own = nodes(plan).filter((n) => isScan(n) && n['Relation Name'] === 'jobs' && n.Alias !== 'o');
      expect(own.length).toBeGreaterThan(0);
      for (const scan of own) expect(scan['Index Name']).toBe('jobs_pkey');
    } finally {
      client.release();
    }
  });
});
