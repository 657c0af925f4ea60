import type pg from 'pg';
import { inTransaction, run } from './sql';

/** What the demo provider can book. */
export type BookingKind = 'flight' | 'hotel' | 'car';

export const BOOKING_KINDS: readonly BookingKind[] = ['flight', 'hotel', 'car'];

/** One row of `example_bookings`. */
export interface ExampleBooking {
  bookingId: number;
  jobId: string;
  threadId: string;
  kind: BookingKind;
  idempotencyKey: string;
  createdAt: Date;
}

export interface BookRequest {
  jobId: string;
  threadId: string;
  idempotencyKey: string;
  /** Deduplicate on the key (an idempotent provider). Default true; false books every call, so a repeat is visible. */
  enforceKey?: boolean;
}

const toBooking = (r: Record<string, unknown>): ExampleBooking => ({
  bookingId: Number(r.booking_id),
  jobId: r.job_id as string,
  threadId: r.thread_id as string,
  kind: r.kind as BookingKind,
  idempotencyKey: r.idempotency_key as string,
  createdAt: r.created_at as Date,
});

/**
 * The demo booking provider of the `vacation` graph: a stand-in for an external system, so its
 * writes are deliberately not fenced. It honours idempotency keys unless told not to.
 */
export class ExampleBookings {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Books `kind`. With `enforceKey` (default) a repeated key returns the first booking and
   * inserts nothing, even when the calls race; `created` says whether this call booked.
   */
  async book(kind: BookingKind, req: BookRequest): Promise<{ booking: ExampleBooking; created: boolean }> {
    const enforceKey = req.enforceKey ?? true;
    return inTransaction(this.pool, async (client) => {
      // The lock makes check-then-insert atomic; the insert's own snapshot starts after it.
      if (enforceKey) await run(client, 'lock_example_booking_key', [kind, req.idempotencyKey]);
      const values = [req.jobId, req.threadId, kind, req.idempotencyKey, enforceKey];
      const inserted = (await run(client, 'insert_example_booking', values)).rows[0];
      const row = inserted ?? (await run(client, 'find_example_booking', [kind, req.idempotencyKey])).rows[0];
      if (!row) throw new Error(`example_bookings: no ${kind} booking with key ${req.idempotencyKey} after a refused insert`);
      return { booking: toBooking(row), created: inserted !== undefined };
    });
  }

  /** The first booking of `kind` made with `idempotencyKey`, or undefined when the provider has none. */
  async findBooking(kind: BookingKind, idempotencyKey: string): Promise<ExampleBooking | undefined> {
    const row = (await run(this.pool, 'find_example_booking', [kind, idempotencyKey])).rows[0];
    return row ? toBooking(row) : undefined;
  }

  /** How many bookings of each kind the job made (zero for kinds it never booked). */
  async countBookings(jobId: string): Promise<Record<BookingKind, number>> {
    const rows = (await run(this.pool, 'count_example_bookings', [jobId])).rows;
    const counts: Record<BookingKind, number> = { flight: 0, hotel: 0, car: 0 };
    for (const r of rows) counts[r.kind as BookingKind] = Number(r.bookings);
    return counts;
  }
}
