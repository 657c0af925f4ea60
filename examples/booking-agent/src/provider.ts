// A stand-in for a restaurant's booking API: one JSON line per booking in BOOKINGS_FILE. Like
// real payment and booking APIs it deduplicates on an idempotency key, so a call repeated after
// a crash returns the first booking instead of making a second one.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Booking {
  bookingId: string;
  restaurant: string;
  people: number;
  idempotencyKey: string;
}

const file = () => process.env.BOOKINGS_FILE ?? 'bookings.jsonl';

function bookings(): Booking[] {
  if (!existsSync(file())) return [];
  return readFileSync(file(), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Booking);
}

/** Books a table; the same idempotency key always answers with the same booking. */
export async function bookTable(restaurant: string, people: number, idempotencyKey: string): Promise<Booking> {
  const earlier = bookings().find((b) => b.idempotencyKey === idempotencyKey);
  if (earlier) return earlier;
  const booking = { bookingId: `T-${bookings().length + 1}`, restaurant, people, idempotencyKey };
  appendFileSync(file(), `${JSON.stringify(booking)}\n`);
  // A slow answer (BOOKING_LATENCY_MS): the window where a crash leaves a booking made but not recorded.
  await sleep(Number(process.env.BOOKING_LATENCY_MS ?? 0));
  return booking;
}
