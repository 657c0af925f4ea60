import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { type Proc, spawnWorker, stackEnv } from '../../../test/support/stack';
import { KEYS, type SecuredHarness, startSecuredApp, TWO_TENANTS } from './security-harness';

// Two tenants racing for the same new thread id (issue 22, item 2): each gets a thread of its
// own, whatever the interleaving. Real HTTP handling (inject), PostgreSQL and a worker process
// that runs the approval graph until it parks, so the threads hold real checkpoints.

const ROUNDS = 50;
const RUN = randomBytes(4).toString('hex');
const backend = inject('redisUrl') ? 'redis' : 'postgres';
const TENANTS = [
  ['acme', KEYS.acme],
  ['globex', KEYS.globex],
] as const;
/** The distinctive input of a tenant in a round; it must show up in that tenant's thread only. */
const marker = (tenant: string, round: number) => `${tenant}-race-${RUN}-${round}`;
const MARKER = new RegExp(`(acme|globex)-race-${RUN}-(\\d+)`, 'g');

let h: SecuredHarness;
let worker: Proc;
/** Per round, each tenant's admission answer: status and job id. */
let answers: Array<Array<{ status: number; jobId: string }>>;

beforeAll(async () => {
  h = await startSecuredApp('security_threads', { security: TWO_TENANTS, backend });
  // All rounds at once: each round's two admissions reach the producer in the same instant.
  answers = await Promise.all(
    Array.from({ length: ROUNDS }, (_, round) =>
      Promise.all(
        TENANTS.map(async ([tenant, key]) => {
          const payload = { graph: 'approval', input: { request: marker(tenant, round) }, threadId: `race-${RUN}-${round}` };
          const r = await h.as(key, { method: 'POST', url: '/v1/jobs', payload });
          return { status: r.statusCode, jobId: r.json().jobId as string };
        }),
      ),
    ),
  );
  worker = spawnWorker(stackEnv(h.queueConfig, h.db.url, h.db.schema, { WORKER_CONCURRENCY: '8' }), 'threads-worker');
  // Every admitted job parks on its interrupt once its thread is its own. A job that shares its
  // thread with the other tenant's parked job waits behind it for ever, so the wait ends at a
  // time limit instead, and the assertions below say what went wrong.
  const admitted = answers.flat().filter((a) => a.status === 202).length;
  await waitFor('every admitted job to park', async () => (await h.db.ledger.countByStatus()).interrupted === admitted, 90_000, 250).catch(() => undefined);
}, 180_000);

afterAll(async () => {
  worker?.kill('SIGTERM');
  await worker?.exited;
  await h?.close();
});

describe(`${ROUNDS} concurrent races of two tenants for the same new thread id`, () => {
  it('admits both tenants in every round (202): neither answer depends on the other tenant', () => {
    const statuses = answers.map((round) => round.map((a) => a.status));
    expect(statuses).toEqual(Array.from({ length: ROUNDS }, () => [202, 202]));
  });

  it('gives each tenant its own LangGraph thread: no checkpoint thread holds both tenants’ inputs', async () => {
    const { rows } = await h.db.ledger.pool.query<{ thread_id: string; text: string }>(
      `SELECT thread_id, string_agg(encode(blob, 'escape'), ' ') AS text
         FROM (SELECT thread_id, blob FROM checkpoint_blobs WHERE blob IS NOT NULL
               UNION ALL SELECT thread_id, blob FROM checkpoint_writes) b
        GROUP BY thread_id`,
    );
    const tenantsByThread = rows.map((r) => new Set([...r.text.matchAll(MARKER)].map((m) => m[1]))).filter((tenants) => tenants.size > 0);
    expect(tenantsByThread.filter((tenants) => tenants.size > 1)).toHaveLength(0);
    expect(tenantsByThread).toHaveLength(2 * ROUNDS);
  });

  it("shows each tenant only its own input and interrupt in GET /v1/threads/:id/state, never the other's", async () => {
    const leaks: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [tenant, key] of TENANTS) {
        const r = await h.as(key, { url: `/v1/threads/race-${RUN}-${round}/state` });
        const seen = new Set([...JSON.stringify(r.json()).matchAll(MARKER)].map((m) => m[0]));
        if (r.statusCode !== 200 || seen.size !== 1 || !seen.has(marker(tenant, round))) {
          leaks.push(`round ${round}, ${tenant}: ${r.statusCode} ${[...seen].join(', ') || 'no input'}`);
        }
      }
    }
    expect(leaks).toEqual([]);
  });

  it("lists only the caller's own job on the shared thread id", async () => {
    for (const [tenant, key] of TENANTS) {
      const jobs = (await h.as(key, { url: `/v1/jobs?threadId=race-${RUN}-0` })).json().jobs as Array<{ jobId: string }>;
      expect(jobs.map((j) => j.jobId)).toEqual([answers[0]?.[TENANTS.findIndex(([t]) => t === tenant)]?.jobId]);
    }
  });
});
