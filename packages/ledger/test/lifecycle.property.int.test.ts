// Property: whatever sequence of verbs workers, operators and sweepers run, some of them at the
// same moment with leases of a few milliseconds, the stored timeline obeys TRANSITIONS, tokens
// only rise, every state has its event, a thread has one lease at most, and terminal jobs stay put.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, type TestDb, testDb } from '../../../test/support/db';
import { InvalidTransitionError, LeaseLostError, type Ledger } from '../src/index';
import { type AcceptedWrite, checkRun, type Sample, sampleJobs } from './support/invariants';
import { warmPool } from './support/jobs';

let db: TestDb;
beforeAll(async () => {
  db = await testDb('property', { poolSize: 24 });
  await warmPool(db.ledger.pool, 16);
});
afterAll(() => db.close());

/** Worker verbs that end an attempt, with the event each leaves. */
const END_EVENTS = {
  complete: 'completed',
  fail: 'failed',
  park: 'interrupted',
  release: 'recovery_required',
  retryLater: 'recovery_required',
  requireManual: 'manual_reconcile',
} as const;
type EndVerb = keyof typeof END_EVENTS;
const END_VERBS = Object.keys(END_EVENTS) as EndVerb[];

/** Operator verbs, with the state each accepts (an aimed command picks a job last seen there). */
const OPERATOR_FROM = { cancel: 'running', resume: 'interrupted', replay: 'manual_reconcile', resolve: 'manual_reconcile' } as const;
type OperatorVerb = keyof typeof OPERATOR_FROM;

type Cmd =
  | { kind: 'admit'; thread: number }
  | { kind: 'claim'; job: number; worker: number; ttlMs: number }
  | { kind: 'heartbeat'; worker: number }
  | { kind: 'checkpoint'; job: number; worker: number }
  | { kind: 'end'; verb: EndVerb; job: number; worker: number }
  | { kind: 'operator'; verb: OperatorVerb; job: number; aimed: boolean; outcome: 'completed' | 'failed' }
  | { kind: 'sweep' }
  | { kind: 'sleep'; ms: number };
type Step = Cmd | { kind: 'parallel'; cmds: Cmd[] };

const job = fc.nat({ max: 9 });
const worker = fc.nat({ max: 2 });
// Mostly leases that expire within the run, some that outlive it.
const ttlMs = fc.constantFrom(1, 5, 20, 60, 5_000);
const operator = fc.record({
  kind: fc.constant('operator' as const),
  verb: fc.constantFrom(...(Object.keys(OPERATOR_FROM) as OperatorVerb[])),
  job,
  aimed: fc.boolean(),
  outcome: fc.constantFrom('completed' as const, 'failed' as const),
});
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('admit' as const), thread: fc.nat({ max: 2 }) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('claim' as const), job, worker, ttlMs }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('heartbeat' as const), worker }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('checkpoint' as const), job, worker }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('end' as const), verb: fc.constantFrom(...END_VERBS), job, worker }) },
  { weight: 3, arbitrary: operator },
  { weight: 1, arbitrary: fc.constant({ kind: 'sweep' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sleep' as const), ms: fc.integer({ min: 0, max: 15 }) }) },
);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: cmd },
  { weight: 1, arbitrary: fc.array(cmd, { minLength: 2, maxLength: 5 }).map((cmds) => ({ kind: 'parallel' as const, cmds })) },
);

/** One run: its own threads, the jobs admitted in order, and each worker's belief about its leases. */
class Run {
  readonly jobs: string[] = [];
  readonly samples: Sample[][] = [];
  readonly writes: AcceptedWrite[] = [];
  private readonly tokens = new Map<string, number>();

  constructor(
    private readonly ledger: Ledger,
    readonly prefix: string,
  ) {}

  async step(s: Step): Promise<void> {
    if (s.kind === 'parallel') await Promise.all([...s.cmds.map((c) => this.exec(c)), this.sample()]);
    else await this.exec(s);
    await this.sample();
  }

  async sample(): Promise<void> {
    this.samples.push(await sampleJobs(this.ledger.pool, this.prefix));
  }

  private jobId(i: number): string | undefined {
    return this.jobs.length ? this.jobs[i % this.jobs.length] : undefined;
  }

  /** A job the last sample saw in `status` (so operator verbs often meet a state they accept), else any job. */
  private jobIn(i: number, status: string): string | undefined {
    const fits = (this.samples.at(-1) ?? []).filter((s) => s.status === status).map((s) => s.jobId);
    return fits.length ? fits[i % fits.length] : this.jobId(i);
  }

  /** The leases this worker believes it holds (current or stale), with their tokens. */
  private leases(worker: number): Array<{ jobId: string; token: number }> {
    return [...this.tokens].filter(([k]) => k.startsWith(`w${worker}|`)).map(([k, token]) => ({ jobId: k.split('|')[1]!, token }));
  }

  /** Runs one command; refusals the ledger is meant to give (lost lease, forbidden transition) are outcomes, not failures. */
  private async exec(c: Cmd): Promise<void> {
    try {
      await this.dispatch(c);
    } catch (err) {
      if (err instanceof LeaseLostError || err instanceof InvalidTransitionError) return;
      throw err;
    }
  }

  private async dispatch(c: Cmd): Promise<void> {
    const { ledger } = this;
    switch (c.kind) {
      case 'admit': {
        const { job } = await ledger.admit({ graph: 'prop', input: {}, threadId: `${this.prefix}-t${c.thread}` });
        this.jobs.push(job.jobId);
        return;
      }
      case 'sweep':
        await ledger.upkeep.sweep({ graceMs: 60_000 });
        return;
      case 'sleep':
        await sleep(c.ms);
        return;
      case 'heartbeat':
        await ledger.heartbeat(`w${c.worker}`, this.leases(c.worker), 20);
        return;
      case 'claim': {
        const id = this.jobId(c.job);
        const r = id ? await ledger.claim(id, `w${c.worker}`, c.ttlMs) : undefined;
        if (id && r?.ok) this.tokens.set(`w${c.worker}|${id}`, r.job.fencingToken);
        return;
      }
      case 'operator':
        return this.operate(c);
      case 'checkpoint':
      case 'end':
        return this.write(c);
    }
  }

  private async operate(c: Extract<Cmd, { kind: 'operator' }>): Promise<void> {
    const id = c.aimed ? this.jobIn(c.job, OPERATOR_FROM[c.verb]) : this.jobId(c.job);
    if (!id) return;
    if (c.verb === 'cancel') await this.ledger.cancel(id);
    else if (c.verb === 'resume') await this.ledger.resume(id, { ok: true });
    else if (c.verb === 'replay') await this.ledger.replay(id);
    else await this.ledger.resolve(id, c.outcome, 'property');
  }

  /** A worker write with the token this worker last won for the job, current or long stale. */
  private async write(c: Extract<Cmd, { kind: 'checkpoint' | 'end' }>): Promise<void> {
    const { ledger } = this;
    const mine = this.leases(c.worker);
    const held = mine[c.job % Math.max(mine.length, 1)];
    if (!held) return;
    const { jobId: id, token } = held;
    const accepted = (event: string) => this.writes.push({ jobId: id, token, workerId: `w${c.worker}`, event });
    if (c.kind === 'checkpoint') {
      if (await ledger.recordCheckpoint(id, token)) accepted('checkpointed');
      return;
    }
    const write: Record<EndVerb, () => Promise<unknown>> = {
      complete: () => ledger.complete(id, token, { by: `w${c.worker}` }),
      fail: () => ledger.fail(id, token, { message: 'property' }),
      park: () => ledger.park(id, token, { ask: 'continue?' }),
      release: () => ledger.release(id, token),
      retryLater: () => ledger.retryLater(id, token, { message: 'flaky' }, c.job % 3 === 0 ? 0 : 5),
      requireManual: () => ledger.requireManual(id, token, 'effect_in_doubt'),
    };
    await write[c.verb]();
    accepted(END_EVENTS[c.verb]);
  }
}

let runs = 0;

describe('ledger under random verbs', () => {
  it('keeps its invariants for every sequence and interleaving', async () => {
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 60, size: 'max' }), async (steps) => {
        const run = new Run(db.ledger, `p${++runs}`);
        // Each run starts with one job per thread, so early commands have something to act on.
        for (const s of [{ kind: 'admit', thread: 0 } as const, { kind: 'admit', thread: 1 } as const, ...steps]) await run.step(s);
        const problems = await checkRun(db.ledger, run.jobs, run.samples, run.writes);
        expect(problems).toEqual([]);
      }),
      { numRuns: 40, interruptAfterTimeLimit: 25_000, markInterruptAsFailure: false },
    );
    expect(Date.now() - started).toBeLessThan(40_000);
  });

  it('the checker is not blind: a forged stale write breaks the timeline', async () => {
    const { ledger } = db;
    const run = new Run(ledger, 'forged');
    await run.step({ kind: 'admit', thread: 0 });
    await run.step({ kind: 'claim', job: 0, worker: 0, ttlMs: 1 });
    await sleep(5);
    await run.step({ kind: 'claim', job: 0, worker: 1, ttlMs: 60_000 });
    await run.step({ kind: 'end', verb: 'complete', job: 0, worker: 1 });
    expect(await checkRun(ledger, run.jobs, run.samples)).toEqual([]);
    // What a broken fence would look like: token 1 writes after token 2, and after the end.
    await ledger.pool.query("INSERT INTO job_events (job_id, type, attempt, fencing_token) VALUES ($1, 'interrupted', 1, 1)", [run.jobs[0]]);
    const problems = await checkRun(ledger, run.jobs, run.samples);
    expect(problems.join('\n')).toMatch(/token fell from 2/);
    expect(problems.join('\n')).toMatch(/written after the job was completed/);
    expect(problems.join('\n')).toMatch(/row is completed\/2, events end at interrupted\/1/);
  });
});
