// Crash windows C to H of ARCHITECTURE.md, Failure → behaviour: worker 1 runs the job and dies in the window, worker 2
// recovers it. Vacation jobs where the window fits a tool; echo where it is a model step.
import { ExampleBookings } from '../packages/ledger/src/index';
import { ECHO, hasEvent, type Lab, type Observation, row, VACATION, type WindowRow } from './lab';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FINAL = ['completed', 'failed', 'manual_reconcile'];
const entered = (node: string) => (e: { type: string; detail: Record<string, unknown> }) => e.type === 'node_entered' && e.detail.node === node;

/** SIGKILLs worker 1, counts the thread's checkpoints, starts worker 2 and waits for the end. */
async function killAndRecover(lab: Lab, w: string, jobId: string): Promise<{ before: number; obs: Observation }> {
  await lab.stack.stopWorker(`${w}1`, 'SIGKILL');
  const before = await lab.checkpoints((await lab.stack.ledger.get(jobId)).threadId);
  await lab.stack.startWorker(`${w}2`);
  await lab.waitStatus(jobId, FINAL);
  return { before, obs: await lab.observe(jobId) };
}

/**
 * Starts worker 1 with the test hook that SIGKILLs it at `point`, submits a vacation job and
 * waits for the worker to die; returns the worker, the job id and the job as the ledger had it then.
 */
async function crashAt(lab: Lab, window: 'C' | 'H', point: 'after_claim' | 'after_invoke') {
  const worker = await lab.stack.startWorker(`${window.toLowerCase()}1`, { RUNLEDGER_TEST_CRASH_AT: point });
  const jobId = await lab.submit(lab.spec(window, VACATION()));
  await worker.exited;
  return { worker, jobId, crashed: await lab.stack.ledger.get(jobId) };
}

/** C: the worker dies right after its claim: no checkpoint, so the stored input is replayed. */
export async function windowC(lab: Lab): Promise<WindowRow> {
  const base = { window: 'C', scenario: 'worker killed after the claim, before any checkpoint → replay', graph: 'vacation' };
  const { worker: a, jobId, crashed } = await crashAt(lab, 'C', 'after_claim');
  const { before, obs } = await killAndRecover(lab, 'c', jobId);
  return row(base, obs, before, [
    [a.child.signalCode === 'SIGKILL' && crashed.firstCheckpointAt === null, 'worker 1 to die with the job claimed and no checkpoint'],
    [before === 0, 'no checkpoint before the recovery'],
    [obs.job.status === 'completed' && hasEvent(obs, 'replayed'), 'replayed and completed'],
    [obs.entries === '[1,1,1]' && obs.bookings === '[1,1,1]', 'entries and bookings [1,1,1]'],
  ]);
}

/** D: killed during the first step (echo: the model-call stand-in): the input checkpoint exists → resume. */
export async function windowD(lab: Lab): Promise<WindowRow> {
  const base = { window: 'D', scenario: 'worker killed during the first step; input checkpoint saved → resume', graph: 'echo' };
  await lab.stack.startWorker('d1');
  const jobId = await lab.submit(lab.spec('D', ECHO({ steps: 2, sleepMs: 1_000 })));
  await lab.waitEvent(jobId, 'step1 entered', entered('step1'));
  const { before, obs } = await killAndRecover(lab, 'd', jobId);
  return row(base, obs, before, [
    [before >= 1, 'the input checkpoint before the recovery'],
    [obs.job.status === 'completed' && hasEvent(obs, 'resumed'), 'resumed and completed'],
    [obs.entries === 'step1 2 · step2 1', 'step1 entered twice (never finished on worker 1), step2 once'],
  ]);
}

/** E: flight and hotel finished and persisted, car still waiting before its call: only car runs again. */
export async function windowE(lab: Lab): Promise<WindowRow> {
  const base = { window: 'E', scenario: 'parallel tools: two persisted, the third killed before its call', graph: 'vacation' };
  await lab.stack.startWorker('e1');
  const jobId = await lab.submit(lab.spec('E', VACATION({ delays: { car: 4_000 } })));
  await lab.waitCommitted(jobId, ['book_flight', 'book_hotel']);
  await lab.waitEvent(jobId, 'book_car entered', entered('book_car'));
  // Each finished tool's write is saved as its task ends; leave it a moment to land.
  await sleep(500);
  const { before, obs } = await killAndRecover(lab, 'e', jobId);
  return row(base, obs, before, [
    [obs.job.status === 'completed' && hasEvent(obs, 'resumed'), 'resumed and completed'],
    [obs.entries === '[1,1,2]', 'entries [1,1,2]: only car ran again'],
    [obs.bookings === '[1,1,1]', 'bookings [1,1,1]'],
  ]);
}

/** F: car booked at the provider, the worker killed before the result was saved. */
async function windowF(lab: Lab, idempotent: boolean): Promise<WindowRow> {
  const base = {
    window: idempotent ? 'F' : "F'",
    scenario: `car committed at the provider, result not saved; ${idempotent ? 'idempotent' : 'NON-idempotent'} provider`,
    graph: 'vacation',
  };
  await lab.stack.startWorker('f1');
  const input = { afterCall: { car: 4_000 }, ...(idempotent ? {} : { providerIdempotent: false }) };
  const jobId = await lab.submit(lab.spec(base.window, VACATION(input)));
  const provider = new ExampleBookings(lab.stack.pool);
  await lab.until('car booked, its effect still pending', async () => {
    const pending = (await lab.stack.ledger.effects(jobId)).some((f) => f.name === 'book_car' && f.status === 'pending');
    return pending && (await provider.countBookings(jobId)).car === 1;
  });
  const { before, obs } = await killAndRecover(lab, 'f', jobId);
  const manual = obs.events.find((e) => e.type === 'manual_reconcile');
  const checks: Array<[boolean, string]> = idempotent
    ? [
        [obs.job.status === 'completed', 'completed'],
        [hasEvent(obs, 'effect_retried'), 'the car effect called again with the same key (effect_retried)'],
      ]
    : [
        [obs.job.status === 'manual_reconcile', 'manual_reconcile, never a silent duplicate'],
        [manual?.detail.effect === 'book_car', `manual_reconcile naming book_car (got ${String(manual?.detail.effect)})`],
      ];
  return row(base, obs, before, [...checks, [obs.entries === '[1,1,2]', 'entries [1,1,2]'], [obs.bookings === '[1,1,1]', 'bookings [1,1,1]']]);
}

export const windowFIdempotent = (lab: Lab) => windowF(lab, true);
export const windowFNonIdempotent = (lab: Lab) => windowF(lab, false);

/** G: killed during the final step: finished steps are not entered again. */
export async function windowG(lab: Lab): Promise<WindowRow> {
  const base = { window: 'G', scenario: 'worker killed during the final step', graph: 'echo' };
  await lab.stack.startWorker('g1');
  const jobId = await lab.submit(lab.spec('G', ECHO({ steps: 3, sleepMs: 400 })));
  await lab.waitEvent(jobId, 'step3 entered', entered('step3'));
  const { before, obs } = await killAndRecover(lab, 'g', jobId);
  return row(base, obs, before, [
    [obs.job.status === 'completed' && hasEvent(obs, 'resumed'), 'resumed and completed'],
    [obs.entries === 'step1 1 · step2 1 · step3 2', 'only step3 entered again'],
  ]);
}

/** H: the graph ended, the worker died before the ledger's completed: recorded without rerunning. */
export async function windowH(lab: Lab): Promise<WindowRow> {
  const base = { window: 'H', scenario: 'graph ended, worker killed before the ledger completion', graph: 'vacation' };
  const { jobId, crashed } = await crashAt(lab, 'H', 'after_invoke');
  const { before, obs } = await killAndRecover(lab, 'h', jobId);
  const completed = obs.events.find((e) => e.type === 'completed');
  return row(base, obs, before, [
    [crashed.status === 'running', `the job running when worker 1 died (was ${crashed.status})`],
    [obs.job.status === 'completed' && completed?.detail.decision === 'already_finished', 'completed as already_finished'],
    [obs.entries === '[1,1,1]' && obs.bookings === '[1,1,1]', 'entries and bookings [1,1,1]'],
  ]);
}
