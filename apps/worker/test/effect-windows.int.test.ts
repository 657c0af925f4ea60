// Effects under real SIGKILL (ARCHITECTURE.md, Failure → behaviour windows E and F, issue 5): the vacation agent books
// flight, hotel and car in parallel; results are [flight, hotel, car] counts.
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ExampleBookings } from '../../../packages/ledger/src/index';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { nodeEntries, processRegistry, queueConfigFor, spawnWorker, stackEnv, submit, waitForStatus } from '../../../test/support/stack';
import '../../../test/support/provided';

const KINDS = ['flight', 'hotel', 'car'] as const;
const TOOLS = ['book_flight', 'book_hotel', 'book_car'] as const;

// Both queue backends; without Redis only the PostgreSQL one runs (the global setup says so).
const backends = (['redis', 'postgres'] as const).filter((b) => b === 'postgres' || inject('redisUrl'));

describe.each(backends)('effects across a SIGKILL (vacation agent, %s queue backend)', (backend) => {
  let db: TestDb;
  let env: NodeJS.ProcessEnv;
  let q: ReturnType<typeof queueConfigFor>;
  let bookings: ExampleBookings;
  const procs = processRegistry();
  const worker = (id: string) => procs.add(spawnWorker(env, id));
  const bookedPerKind = async (jobId: string) => {
    const counts = await bookings.countBookings(jobId);
    return KINDS.map((k) => counts[k] ?? 0);
  };
  const toolEntries = async (jobId: string) => {
    const n = await nodeEntries(db.ledger, jobId);
    return TOOLS.map((t) => n[t] ?? 0);
  };
  const effectStatus = async (jobId: string, name: string) => (await db.ledger.effects(jobId)).find((e) => e.name === name);
  /** Window F's crash point: the car is booked at the provider and flight and hotel are committed in the effects ledger (on a loaded machine the car can get there first). */
  const carBookedOthersCommitted = async (jobId: string) => {
    if ((await bookedPerKind(jobId))[2] !== 1) return false;
    const effects = await db.ledger.effects(jobId);
    return ['book_flight', 'book_hotel'].every((name) => effects.some((e) => e.name === name && e.status === 'committed'));
  };
  /** Runs a vacation job on worker A, kills A with SIGKILL when `when` holds, then lets worker B recover it. */
  async function crashAndRecover(input: Record<string, unknown>, when: (jobId: string) => Promise<boolean>) {
    const a = worker('a');
    const job = await submit(db.ledger, q, { graph: 'vacation', input: { traceNodes: true, ...input } });
    await waitFor('the crash point', () => when(job.jobId), 30_000, 25);
    a.kill('SIGKILL');
    await a.exited;
    worker('b');
    return waitForStatus(db.ledger, job.jobId, ['completed', 'failed', 'manual_reconcile']);
  }

  beforeAll(async () => {
    db = await testDb(`effect_windows_${backend}`);
    q = queueConfigFor(backend, db.url, db.schema, inject('redisUrl'));
    env = stackEnv(q, db.url, db.schema, { LEASE_TTL_MS: '1500', SWEEP_INTERVAL_MS: '250' });
    bookings = new ExampleBookings(db.ledger.pool);
  });
  afterEach((ctx) => procs.cleanup(ctx));
  afterAll(() => db?.close());

  it('E: flight and hotel persisted, car killed before its call → entries [1,1,2], bookings [1,1,1]', async () => {
    // Crash point: flight's and hotel's task writes are persisted (not only their effects) and
    // the car's tool body is running.
    const saver = new PostgresSaver(db.ledger.pool, undefined, { schema: db.schema });
    const done = await crashAndRecover({ delays: { car: 4_000 } }, async (jobId) => {
      const tuple = await saver.getTuple({ configurable: { thread_id: jobId } });
      const toolWrites = (tuple?.pendingWrites ?? []).filter(([, channel]) => channel === 'messages').length;
      return toolWrites >= 2 && (await nodeEntries(db.ledger, jobId)).book_car === 1;
    });
    expect(done.status).toBe('completed');
    expect(await toolEntries(done.jobId)).toEqual([1, 1, 2]);
    expect(await bookedPerKind(done.jobId)).toEqual([1, 1, 1]);
  });

  it('F, idempotent provider: car booked at the provider, killed before its result was saved → bookings [1,1,1], completed', async () => {
    const done = await crashAndRecover({ afterCall: { car: 4_000 } }, carBookedOthersCommitted);
    expect(done.status).toBe('completed');
    expect(await bookedPerKind(done.jobId)).toEqual([1, 1, 1]);
    const car = await effectStatus(done.jobId, 'book_car');
    expect(car).toMatchObject({ status: 'committed', attempts: 2 });
  });

  it('F, non-idempotent provider, no reconcile → manual_reconcile naming book_car, no second call', async () => {
    const done = await crashAndRecover({ afterCall: { car: 4_000 }, providerIdempotent: false }, carBookedOthersCommitted);
    expect(done.status).toBe('manual_reconcile');
    const event = (await db.ledger.events(done.jobId)).find((e) => e.type === 'manual_reconcile');
    expect(event?.detail).toMatchObject({ effect: 'book_car' });
    expect(await bookedPerKind(done.jobId)).toEqual([1, 1, 1]);
    expect(await effectStatus(done.jobId, 'book_car')).toMatchObject({ status: 'pending', attempts: 1 });
  });

  it('F with a reconcile function → completed, bookings [1,1,1], the recorded result is the provider’s', async () => {
    const done = await crashAndRecover({ afterCall: { car: 4_000 }, providerIdempotent: false, reconcile: true }, carBookedOthersCommitted);
    expect(done.status).toBe('completed');
    expect(await bookedPerKind(done.jobId)).toEqual([1, 1, 1]);
    const car = await effectStatus(done.jobId, 'book_car');
    const booking = await bookings.findBooking('car', car!.idempotencyKey);
    expect(car).toMatchObject({ status: 'committed', result: { kind: 'car', bookingId: booking!.bookingId } });
  });

  it('C with an effect already pending and no checkpoint → manual_reconcile, not a replay', async () => {
    // A dead attempt that recorded an intent before any checkpoint (possible with the
    // Functional API or durability "exit"): claim it as a worker that then vanishes.
    const { job } = await db.ledger.admit({ graph: 'vacation', input: { traceNodes: true } });
    const dead = await db.ledger.claim(job.jobId, 'vanished-worker', 2_000);
    if (!dead.ok) throw new Error('claim refused');
    await db.ledger.recordEffectIntent(job.jobId, dead.job.fencingToken, 'thread:call_car', 'book_car', 'rl-key');
    worker('b');
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed', 'manual_reconcile']);
    expect(done.status).toBe('manual_reconcile');
    const types = (await db.ledger.events(job.jobId)).map((e) => e.type);
    expect(types).not.toContain('replayed');
    expect(await toolEntries(job.jobId)).toEqual([0, 0, 0]);
  });

  it('a worker paused past its lease cannot record an intent or a commit', async () => {
    const a = worker('a');
    const job = await submit(db.ledger, q, { graph: 'vacation', input: { traceNodes: true, delays: { car: 2_500 } } });
    await waitFor('car entered', async () => (await nodeEntries(db.ledger, job.jobId)).book_car === 1, 30_000, 25);
    a.kill('SIGSTOP');
    worker('b');
    await waitFor('B holds the lease', async () => (await db.ledger.get(job.jobId)).leaseOwner === 'b');
    a.kill('SIGCONT');
    const done = await waitForStatus(db.ledger, job.jobId, ['completed', 'failed', 'manual_reconcile']);
    expect(done.status).toBe('completed');
    await waitFor('A to report the lost lease', async () => a.output().includes('lease lost'), 10_000);
    expect(await bookedPerKind(job.jobId)).toEqual([1, 1, 1]);
    const car = await effectStatus(job.jobId, 'book_car');
    // The car's intent and commit carry B's token: A wrote neither.
    expect(car).toMatchObject({ status: 'committed', fencingToken: done.fencingToken, attempts: 1 });
  });
});
