/** One caller waiting in a `Coalescer`: its item and how to answer it. */
export interface Waiter<T, R> {
  item: T;
  resolve(value: R): void;
  reject(err: unknown): void;
}

/**
 * Natural group commit, no timer: an item submitted while fewer than `maxInFlight` batches are
 * running goes out at once (after the current microtask, so a synchronous burst travels
 * together); otherwise it waits, and everything that waited goes as the next batch when one
 * returns. Low load therefore adds no latency; under load each statement carries the arrivals of
 * one round trip. `run` answers every waiter of its batch; if it throws, those it left unanswered
 * get that error.
 */
export class Coalescer<T, R> {
  private queue: Array<Waiter<T, R>> = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly run: (batch: Array<Waiter<T, R>>) => Promise<void>,
    private readonly maxInFlight: number,
    private readonly maxBatch: number,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled && this.inFlight < this.maxInFlight) {
        this.scheduled = true;
        queueMicrotask(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
      this.queue = this.queue.length <= this.maxBatch ? [] : this.queue.slice(this.maxBatch);
      this.inFlight++;
      this.run(batch)
        // Rejecting a settled promise changes nothing, so every waiter of the batch may be told.
        .catch((err: unknown) => {
          for (const w of batch) w.reject(err);
        })
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}
