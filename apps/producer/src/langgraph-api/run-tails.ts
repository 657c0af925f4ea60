import type { Job, JobStatus, StreamEvent } from '@runledger/ledger';
import { isSettled } from './status';

/** What the tails read: a run's stream log and its job, by id (the route checked the tenant before). */
export interface TailReads {
  lastId(jobId: string): Promise<number>;
  read(jobId: string, afterId: number, limit: number): Promise<StreamEvent[]>;
  tail(jobId: string, afterId: number, limit: number): Promise<{ status: JobStatus | null; events: StreamEvent[] }>;
  job(jobId: string): Promise<Job>;
}

/** How often a tail polls a run that is running, and one that waits (accepted, delayed, recovering). */
const RUNNING_EVERY_MS = 50;
const WAITING_EVERY_MS = 250;
const PAGE = 500;

type Delivery = { events: StreamEvent[] } | { settled: Job } | { failed: unknown };

interface Listener {
  /** Whether it wants the run's chunks (a stream) or only its end (a join or wait). */
  chunks: boolean;
  deliver(d: Delivery): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One run's poller, shared by every stream and join of that run in this process. */
class RunTail {
  /** The newest chunk id handed to the listeners; every later chunk reaches every listener present then. */
  last = -1;
  started = false;
  readonly start: Promise<number>;
  readonly listeners = new Set<Listener>();

  constructor(
    private readonly reads: TailReads,
    readonly jobId: string,
    private readonly onPoll: (jobId: string) => void,
    private readonly done: () => void,
  ) {
    this.start = reads.lastId(jobId);
    void this.run();
  }

  private deliver(d: Delivery): void {
    for (const l of this.listeners) if (l.chunks || !('events' in d)) l.deliver(d);
  }

  private async run(): Promise<void> {
    try {
      this.last = await this.start;
      this.started = true;
      while (this.listeners.size > 0) {
        const chunks = [...this.listeners].some((l) => l.chunks);
        this.onPoll(this.jobId);
        const { status, events } = await this.reads.tail(this.jobId, this.last, chunks ? PAGE : 0);
        const last = events.at(-1);
        if (last) {
          this.last = last.id;
          this.deliver({ events });
          if (events.length === PAGE) continue;
        }
        if (status === null || isSettled(status)) {
          // Leave the registry first: a subscriber arriving now starts a new tail, which sees the end at once.
          this.done();
          this.deliver({ settled: await this.reads.job(this.jobId) });
          return;
        }
        await sleep(status === 'starting' || status === 'running' ? RUNNING_EVERY_MS : WAITING_EVERY_MS);
      }
      this.done();
    } catch (err) {
      this.done();
      this.deliver({ failed: err });
    }
  }
}

/** Deliveries in arrival order, awaited one at a time; an aborted signal ends the wait. */
class Inbox {
  private readonly items: Delivery[] = [];
  private wake: (() => void) | undefined;

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', () => this.wake?.(), { once: true });
  }

  push(d: Delivery): void {
    this.items.push(d);
    this.wake?.();
  }

  /** The next delivery, or undefined once the signal aborted. */
  async next(): Promise<Delivery | undefined> {
    while (this.items.length === 0 && !this.signal.aborted) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
    return this.signal.aborted ? undefined : this.items.shift();
  }
}

/**
 * The shared tails of this producer: one poller per run however many clients stream or join it,
 * so PostgreSQL's load follows the runs watched, not the watchers. A stream first replays its
 * backlog from the log (once), then takes the tail's chunks; a join takes only the tail's end.
 */
export class RunTails {
  private readonly tails = new Map<string, RunTail>();

  constructor(
    private readonly reads: TailReads,
    /** Called at each poll of a tail (an observer for tests and metrics). */
    private readonly onPoll: (jobId: string) => void = () => {},
  ) {}

  private join(jobId: string, listener: Listener): RunTail {
    let tail = this.tails.get(jobId);
    if (!tail) {
      const created = new RunTail(this.reads, jobId, this.onPoll, () => {
        if (this.tails.get(jobId) === created) this.tails.delete(jobId);
      });
      tail = created;
      this.tails.set(jobId, tail);
    }
    tail.listeners.add(listener);
    return tail;
  }

  /**
   * The run's chunks after `afterId`, in id order, each once, until the run settles: then returns
   * its job. Returns undefined when `signal` aborts first; throws what a poll threw.
   */
  async *follow(jobId: string, afterId: number, signal: AbortSignal): AsyncGenerator<StreamEvent, Job | undefined> {
    const inbox = new Inbox(signal);
    const listener: Listener = { chunks: true, deliver: (d) => inbox.push(d) };
    const tail = this.join(jobId, listener);
    try {
      // Everything after `handedOver` reaches the inbox; the log holds what came before.
      const handedOver = tail.started ? tail.last : await tail.start;
      let last = afterId;
      while (last < handedOver) {
        const page = await this.reads.read(jobId, last, PAGE);
        if (page.length === 0) break;
        yield* page;
        last = page.at(-1)?.id ?? last;
      }
      for (let d = await inbox.next(); d; d = await inbox.next()) {
        if ('failed' in d) throw d.failed;
        if ('settled' in d) return d.settled;
        for (const e of d.events) {
          if (e.id <= last) continue;
          yield e;
          last = e.id;
        }
      }
      return undefined;
    } finally {
      tail.listeners.delete(listener);
    }
  }

  /** The run's job once it settles, or undefined when `signal` aborts first; throws what a poll threw. */
  async settled(jobId: string, signal: AbortSignal): Promise<Job | undefined> {
    const inbox = new Inbox(signal);
    const listener: Listener = { chunks: false, deliver: (d) => inbox.push(d) };
    const tail = this.join(jobId, listener);
    try {
      const d = await inbox.next();
      if (d && 'failed' in d) throw d.failed;
      return d && 'settled' in d ? d.settled : undefined;
    } finally {
      tail.listeners.delete(listener);
    }
  }
}
