import { type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { ExampleBookings, LeaseLostError } from '@runledger/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb, waitFor } from '../../../test/support/db';
import { vacationGraph } from '../src/graphs/vacation';
import { EffectInDoubtError, ScriptedVacationModel } from '../src/index';
import { admitVacation, bookingsOf, claimAttempt, entries, reclaimAfterExpiry } from './support/attempt';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('vacation');
});
afterAll(() => db.close());

type Final = { messages: BaseMessage[] };

describe('vacation graph', () => {
  it('books flight, hotel and car once each and summarises them', async () => {
    const input = { traceNodes: true };
    const job = await admitVacation(db, input);
    const a = await claimAttempt(db, job);
    const out = (await a.graph.invoke(input, a.config)) as Final;
    expect(await bookingsOf(db, job.jobId)).toEqual({ flight: 1, hotel: 1, car: 1 });
    const effects = await db.ledger.effects(job.jobId);
    expect(effects.map((e) => [e.name, e.status, e.attempts]).sort()).toEqual([
      ['book_car', 'committed', 1],
      ['book_flight', 'committed', 1],
      ['book_hotel', 'committed', 1],
    ]);
    for (const e of effects) expect(e.effectKey).toMatch(new RegExp(`^${job.threadId}:call_[0-9a-f]{16}_(flight|hotel|car)$`));
    const answer = out.messages.at(-1)?.text ?? '';
    expect(answer).toMatch(/FLIGHT-\d+/);
    expect(answer).toMatch(/HOTEL-\d+/);
    expect(answer).toMatch(/CAR-\d+/);
    expect(await entries(db, job.jobId)).toEqual({ agent: 2, book_flight: 1, book_hotel: 1, book_car: 1 });
    expect((await db.ledger.get(job.jobId)).status).toBe('running');
    // A finished thread continued with null input returns its state and books nothing more.
    await a.graph.invoke(null, a.config);
    expect(await bookingsOf(db, job.jobId)).toEqual({ flight: 1, hotel: 1, car: 1 });
  });

  it('asks for the same tool call ids whenever it plays the same job (so a replay keeps its effect keys)', async () => {
    const ask = async (seed: string) => {
      const reply = await new ScriptedVacationModel({ callIdSeed: seed }).invoke([new HumanMessage('Book my vacation.')]);
      return (reply.tool_calls ?? []).map((c) => [c.name, c.id]);
    };
    const first = await ask('job-1');
    expect(first.map(([name]) => name)).toEqual(['book_flight', 'book_hotel', 'book_car']);
    expect(await ask('job-1')).toEqual(first);
    expect((await ask('job-2'))[0]?.[1]).not.toBe(first[0]?.[1]);
  });

  it('validates its input strictly, naming each bad field', () => {
    expect(vacationGraph.validateInput?.({ delays: { car: 10 }, afterCall: { hotel: 5 }, providerIdempotent: false, reconcile: true })).toBeUndefined();
    expect(vacationGraph.validateInput?.(undefined)).toBeUndefined();
    const bad = vacationGraph.validateInput?.({ delays: { boat: 1 }, providerIdempotent: 'yes', extra: 1 }) ?? '';
    expect(bad).toMatch(/^vacation input: /);
    expect(bad).toContain('delays');
    expect(bad).toContain('providerIdempotent');
    expect(bad).toMatch(/extra/);
  });

  it('window E: a resumed run keeps the persisted flight and hotel results and runs only the car again', async () => {
    const input = { traceNodes: true, delays: { car: 2_000 } };
    const job = await admitVacation(db, input);
    const first = await claimAttempt(db, job);
    const run = first.graph.invoke(input, first.config);
    const thread = { configurable: { thread_id: job.threadId } };
    // Flight and hotel finished: their ToolMessages are pending writes of the saved step, while car still sleeps.
    await waitFor('flight and hotel writes to be persisted', async () => {
      const writes = (await first.saver.getTuple(thread))?.pendingWrites ?? [];
      return new Set(writes.filter(([, channel]) => channel === 'messages').map(([taskId]) => taskId)).size === 2;
    });
    first.controller.abort(new Error('test: the car tool dies'));
    await expect(run).rejects.toThrow();
    expect(await bookingsOf(db, job.jobId)).toEqual({ flight: 1, hotel: 1, car: 0 });

    const second = await reclaimAfterExpiry(db, job);
    expect(second.ctx.attempt).toBe(2);
    // null input continues the thread; the car's delay is saved state, so it waits again before booking.
    const out = (await second.graph.invoke(null, second.config)) as Final;
    expect(out.messages.at(-1)?.text).toMatch(/CAR-\d+/);
    expect(await bookingsOf(db, job.jobId)).toEqual({ flight: 1, hotel: 1, car: 1 });
    expect(await entries(db, job.jobId)).toEqual({ agent: 2, book_flight: 1, book_hotel: 1, book_car: 2 });
    const carEntries = (await db.ledger.events(job.jobId)).filter((e) => e.type === 'node_entered' && e.detail.node === 'book_car');
    expect(carEntries.map((e) => e.attempt)).toEqual([1, 2]);
    expect((await db.ledger.effects(job.jobId)).every((e) => e.status === 'committed' && e.attempts === 1)).toBe(true);
  });

  describe('window F: the car was booked but its result never saved', () => {
    /**
     * Runs a first attempt until the provider booked the car, then lets its lease lapse and claims
     * again while the car tool still waits (`afterCall`): the stale attempt's commit is refused,
     * so the car effect stays pending, as after a crash between the provider and the ledger.
     */
    async function carBookedThenLeaseLost(input: Record<string, unknown>) {
      const job = await admitVacation(db, { ...input, traceNodes: true, afterCall: { car: 1_500 } });
      const first = await claimAttempt(db, job);
      const run = first.graph.invoke(job.input, first.config);
      run.catch(() => {});
      // Flight and hotel committed in the effects ledger, not only the car booked: on a loaded
      // machine the car can get there before the others.
      await waitFor('the car booking, after flight and hotel committed', async () => {
        const committed = (await db.ledger.effects(job.jobId)).filter((e) => e.status === 'committed').map((e) => e.name);
        return (await bookingsOf(db, job.jobId)).car === 1 && committed.includes('book_flight') && committed.includes('book_hotel');
      });
      const second = await reclaimAfterExpiry(db, job);
      await expect(run).rejects.toBeInstanceOf(LeaseLostError);
      const car = (await db.ledger.effects(job.jobId)).find((e) => e.name === 'book_car');
      expect(car).toMatchObject({ status: 'pending', attempts: 1, fencingToken: first.ctx.fencingToken });
      expect(await bookingsOf(db, job.jobId)).toEqual({ flight: 1, hotel: 1, car: 1 });
      return { job, second, car: car! };
    }

    it('an idempotent provider is called again with the same key and books nothing new', async () => {
      const { job, second, car } = await carBookedThenLeaseLost({});
      const out = (await second.graph.invoke(null, second.config)) as Final;
      expect(await bookingsOf(db, job.jobId)).toEqual({ flight: 1, hotel: 1, car: 1 });
      const after = await db.ledger.effects(job.jobId);
      const carAfter = after.find((e) => e.name === 'book_car');
      expect(carAfter).toMatchObject({ status: 'committed', attempts: 2, idempotencyKey: car.idempotencyKey });
      const booking = await new ExampleBookings(db.ledger.pool).findBooking('car', car.idempotencyKey);
      expect(carAfter?.result).toMatchObject({ bookingId: booking?.bookingId });
      expect(out.messages.at(-1)?.text).toContain(`CAR-${booking?.bookingId}`);
      expect(await entries(db, job.jobId)).toEqual({ agent: 2, book_flight: 1, book_hotel: 1, book_car: 2 });
      expect((await db.ledger.events(job.jobId)).map((e) => e.type)).toContain('effect_retried');
    });

    it('a provider without idempotency and no reconcile stops with EffectInDoubtError naming book_car, without a second call', async () => {
      const { job, second, car } = await carBookedThenLeaseLost({ providerIdempotent: false });
      const failure = await second.graph.invoke(null, second.config).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(EffectInDoubtError);
      expect(failure).toMatchObject({ effectName: 'book_car', effectKey: car.effectKey, idempotencyKey: car.idempotencyKey });
      expect(car.effectKey).toMatch(new RegExp(`^${job.threadId}:call_[0-9a-f]{16}_car$`));
      // The provider would have inserted a second row had it been called.
      expect(await bookingsOf(db, job.jobId)).toEqual({ flight: 1, hotel: 1, car: 1 });
      expect((await db.ledger.effects(job.jobId)).find((e) => e.name === 'book_car')).toMatchObject({ status: 'pending', attempts: 1 });
    });

    it('reconcile records the booking the provider already made, without a second call', async () => {
      const { job, second, car } = await carBookedThenLeaseLost({ providerIdempotent: false, reconcile: true });
      const out = (await second.graph.invoke(null, second.config)) as Final;
      expect(await bookingsOf(db, job.jobId)).toEqual({ flight: 1, hotel: 1, car: 1 });
      const booking = await new ExampleBookings(db.ledger.pool).findBooking('car', car.idempotencyKey);
      const carAfter = (await db.ledger.effects(job.jobId)).find((e) => e.name === 'book_car');
      expect(carAfter).toMatchObject({ status: 'committed', attempts: 1, fencingToken: second.ctx.fencingToken });
      expect(carAfter?.result).toEqual({ kind: 'car', bookingId: booking?.bookingId, confirmation: `CAR-${booking?.bookingId}` });
      expect(out.messages.at(-1)?.text).toContain(`CAR-${booking?.bookingId}`);
      const reconciled = (await db.ledger.events(job.jobId)).find((e) => e.type === 'effect_reconciled');
      expect(reconciled?.detail).toMatchObject({ name: 'book_car', outcome: 'committed' });
    });
  });
});
