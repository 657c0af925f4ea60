// Keeps the chaos stack's processes up: restarts in the background (with the slot marked busy
// so no fault picks it meanwhile), retried starts, and a watchdog that restarts any worker or
// producer that died outside a fault and records it, since that is a finding.
import type { Proc } from './procs';
import type { Stack } from './stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ExitRecord {
  at: string;
  target: string;
  detail: string;
  /** The last output of the process. */
  tail?: string;
}

/** `exit 1: Error: …`: how a process ended and the error that ended it (else the first error line of its last output). */
export function describeExit(p: Proc): { detail: string; tail: string } {
  const tail = p.recent.slice(-4_000);
  const uncaught = tail.lastIndexOf('throw er; // Unhandled');
  const lines = (uncaught >= 0 ? tail.slice(uncaught) : tail).split('\n');
  const error = lines.find((l) => /^\w*(Error|error)\b|Error:/.test(l.trim())) ?? '';
  const where = tail.includes("Emitted 'error' event on Client instance") ? " (unhandled 'error' event of a pg Client)" : '';
  return { detail: `exit ${p.child.exitCode ?? p.child.signalCode}: ${error.trim()}${where}`, tail: tail.slice(-1_500) };
}

export class Supervisor {
  /** Slots being restarted or paused by a fault. */
  readonly busy = new Set<string>();
  /** Processes that died on their own (or failed to restart). */
  readonly unexpectedExits: ExitRecord[] = [];
  /** Producer faults and restarts queued or running; the watchdog leaves the producer alone meanwhile. */
  private producerOwners = 0;
  private producerWork: Promise<void> = Promise.resolve();
  private readonly background = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly stack: Stack,
    readonly slots: string[],
  ) {}

  startWatchdog(): void {
    this.timer ??= setInterval(() => void this.check(), 500);
  }

  stopWatchdog(): void {
    clearInterval(this.timer);
  }

  private note(target: string, detail: string, tail?: string): void {
    this.unexpectedExits.push({ at: new Date().toISOString(), target, detail, tail });
  }

  /** Restarts every dead worker slot nobody is handling, and the producer when no fault owns it. */
  async check(): Promise<void> {
    for (const slot of this.slots) {
      const p = this.stack.workers.get(slot);
      if (this.busy.has(slot) || p?.alive) continue;
      const exit = p ? describeExit(p) : { detail: 'missing', tail: '' };
      this.note(p?.name ?? slot, exit.detail, exit.tail);
      this.occupy(slot, () => this.startWorker(slot));
    }
    const producer = this.stack.producer;
    if (this.producerOwners === 0 && producer && !producer.alive) {
      const exit = describeExit(producer);
      this.note(producer.name, exit.detail, exit.tail);
      await this.ownProducer(async () => {
        if (!this.stack.producer?.alive) await this.startProducer({});
      });
    }
  }

  /** Queues `work` on the producer (one owner at a time) and returns at once. */
  ownProducer(work: () => Promise<void>): Promise<void> {
    this.producerOwners++;
    this.producerWork = this.producerWork
      .then(work)
      .catch((err: Error) => this.note('producer', `restart failed: ${err.message}`))
      .finally(() => {
        this.producerOwners--;
      });
    return Promise.resolve();
  }

  /** Runs `work` in the background with `slot` marked busy. */
  occupy(slot: string, work: () => Promise<unknown>): void {
    this.busy.add(slot);
    const run = work()
      .catch((err: Error) => this.note(slot, `restart failed: ${err.message}`))
      .then(() => {
        this.busy.delete(slot);
        this.background.delete(run);
      });
    this.background.add(run);
  }

  /** Live slots no fault is handling. */
  freeSlots(): string[] {
    return this.slots.filter((s) => !this.busy.has(s) && this.stack.workers.get(s)?.alive);
  }

  startWorker(slot: string): Promise<void> {
    return retry(() => this.stack.startWorker(slot));
  }

  startProducer(extra: Record<string, string>): Promise<void> {
    return retry(() => this.stack.startProducer(extra));
  }

  /** Waits for every background restart and producer fault, wakes paused workers, restarts what is down. */
  async heal(): Promise<void> {
    await this.settle();
    for (const p of this.stack.workers.values()) p.kill('SIGCONT');
    await this.check();
    await this.settle();
  }

  private async settle(): Promise<void> {
    for (;;) {
      await this.producerWork;
      if (this.background.size === 0) return;
      await Promise.all([...this.background]);
    }
  }
}

/** A start attempt fails when the process dies while PostgreSQL restarts: try a few times. */
async function retry(start: () => Promise<unknown>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await start();
      return;
    } catch (err) {
      if (i >= 5) throw err;
      await sleep(500);
    }
  }
}
