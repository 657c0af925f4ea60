import { ExampleBookings } from '@runledger/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';

let db: TestDb;
let provider: ExampleBookings;
beforeAll(async () => {
  db = await testDb('example_bookings');
  provider = new ExampleBookings(db.ledger.pool);
});
afterAll(() => db.close());

const request = (jobId: string, idempotencyKey: string, enforceKey?: boolean) => ({ jobId, threadId: `thread-${jobId}`, idempotencyKey, enforceKey });

describe('the demo booking provider', () => {
  it('books once per key when it enforces keys, even when the calls race', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => provider.book('car', request('job-race', 'key-race'))));
    expect(new Set(results.map((r) => r.booking.bookingId)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await provider.countBookings('job-race')).toEqual({ flight: 0, hotel: 0, car: 1 });
    // The key is scoped to the kind, like separate provider APIs.
    expect((await provider.book('hotel', request('job-race', 'key-race'))).created).toBe(true);
  });

  it('books every call when it does not enforce keys, so a repeat is visible', async () => {
    const a = await provider.book('flight', request('job-dup', 'key-dup', false));
    const b = await provider.book('flight', request('job-dup', 'key-dup', false));
    expect(a.created && b.created).toBe(true);
    expect(b.booking.bookingId).not.toBe(a.booking.bookingId);
    expect(await provider.countBookings('job-dup')).toEqual({ flight: 2, hotel: 0, car: 0 });
  });

  it('answers reconcile questions: the first booking with a key, or nothing', async () => {
    const { booking } = await provider.book('hotel', request('job-find', 'key-find'));
    expect(await provider.findBooking('hotel', 'key-find')).toEqual(booking);
    expect(booking).toMatchObject({ jobId: 'job-find', threadId: 'thread-job-find', kind: 'hotel', idempotencyKey: 'key-find' });
    expect(await provider.findBooking('car', 'key-find')).toBeUndefined();
    expect(await provider.findBooking('hotel', 'never-used')).toBeUndefined();
  });
});
