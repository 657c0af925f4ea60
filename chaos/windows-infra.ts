// Crash windows I to L of ARCHITECTURE.md, Failure → behaviour: a paused worker wakes up, Redis loses everything,
// PostgreSQL restarts, and a worker is asked to stop. Real processes and real servers.
import { ChaosRedis } from './infra';
import { hasEvent, type Lab, row, VACATION, type WindowRow } from './lab';

const FINAL = ['completed', 'failed', 'manual_reconcile'];
const slow = (ms: number) => VACATION({ delays: { flight: ms, hotel: ms, car: ms } });

/** Waits until all three tools of the job were entered. */
const toolsEntered = (lab: Lab, jobId: string) =>
  lab.until(`${jobId}: three tools entered`, async () => {
    const events = await lab.stack.ledger.events(jobId);
    return events.filter((e) => e.type === 'node_entered' && String(e.detail.node).startsWith('book_')).length >= 3;
  });

/** I: worker 1 is paused past its lease (SIGSTOP), worker 2 takes over, worker 1 wakes (SIGCONT): every write it tries is refused. */
export async function windowI(lab: Lab): Promise<WindowRow> {
  const base = { window: 'I', scenario: 'worker paused past its lease wakes up and tries to write', graph: 'vacation' };
  const { stack } = lab;
  const a = await stack.startWorker('i1');
  const jobId = await lab.submit(lab.spec('I', slow(2_500)));
  await toolsEntered(lab, jobId);
  a.kill('SIGSTOP');
  const before = await lab.checkpoints((await stack.ledger.get(jobId)).threadId);
  await stack.startWorker('i2');
  const bId = stack.workerIdOf('i2');
  const bClaim = await lab.waitEvent(jobId, 'claim by worker 2', (e) => e.type === 'claimed' && e.workerId === bId);
  a.kill('SIGCONT');
  await lab.waitStatus(jobId, FINAL);
  const reported = await lab.until('worker 1 to report the lost lease', async () => a.rejections.leaseLostStops > 0, 10_000).catch(() => false);
  const obs = await lab.observe(jobId);
  const stale = obs.events.filter((e) => e.eventId > bClaim.eventId && e.fencingToken < bClaim.fencingToken);
  return row(
    base,
    obs,
    before,
    [
      [obs.job.status === 'completed', 'completed by worker 2'],
      [reported, 'worker 1 to log "lease lost" after waking'],
      [stale.length === 0, `no write with worker 1's token after worker 2's claim (found ${stale.length})`],
      [obs.bookings === '[1,1,1]', 'bookings [1,1,1]'],
    ],
    [`worker 1: ${a.rejections.leaseLostStops} lease-lost stop(s), ${a.rejections.rejectedCheckpointWrites} checkpoint write(s) rolled back`],
  );
}

/** J: FLUSHALL while one job runs and another waits in the queue: the reconciler redelivers from the ledger. */
export async function windowJ(lab: Lab): Promise<WindowRow> {
  const base = { window: 'J', scenario: 'Redis FLUSHALL mid-run (one job running, one waiting in the queue)', graph: 'vacation' };
  const { stack } = lab;
  await stack.startWorker('j1', { WORKER_CONCURRENCY: '1' });
  const running = await lab.submit(lab.spec('J', slow(2_000)));
  await lab.waitEvent(running, 'claimed', (e) => e.type === 'claimed');
  const waiting = await lab.submit(lab.spec('J', VACATION()));
  await lab.waitEvent(waiting, 'enqueued', (e) => e.type === 'enqueued');
  const before = await lab.checkpoints(running);
  if (!(stack.redis instanceof ChaosRedis)) throw new Error('window J runs on a single Redis');
  await stack.redis.flushAll();
  await lab.waitStatus(running, FINAL, 40_000);
  await lab.waitStatus(waiting, FINAL, 40_000);
  const obs = await lab.observe(running);
  const second = await lab.observe(waiting);
  return row(
    base,
    obs,
    before,
    [
      [obs.job.status === 'completed' && obs.bookings === '[1,1,1]', 'the running job completed with bookings [1,1,1]'],
      [second.job.status === 'completed' && second.bookings === '[1,1,1]', 'the flushed waiting job completed with bookings [1,1,1]'],
      [second.job.deliveries >= 2, `the waiting job redelivered (deliveries ${second.job.deliveries})`],
    ],
    [`waiting job: ${second.job.status}, ${second.job.deliveries} deliveries, bookings ${second.bookings}`],
  );
}

/** K: PostgreSQL restarts while the tools run: the workers reconnect and the run finishes. */
export async function windowK(lab: Lab): Promise<WindowRow> {
  const base = { window: 'K', scenario: 'PostgreSQL restart mid-run (stop, 0.5 s down, start)', graph: 'vacation' };
  const { stack } = lab;
  const workers = [await stack.startWorker('k1'), await stack.startWorker('k2')];
  const jobId = await lab.submit(lab.spec('K', slow(2_500)));
  await toolsEntered(lab, jobId);
  const before = await lab.checkpoints((await stack.ledger.get(jobId)).threadId);
  await stack.pg.restart(500);
  await lab.waitStatus(jobId, FINAL, 40_000);
  const obs = await lab.observe(jobId);
  const died = workers.filter((w) => !w.alive).map((w) => `${w.name}: ${w.recent.split('\n').find((l) => l.includes('Error')) ?? 'exited'}`);
  return row(
    base,
    obs,
    before,
    [
      [obs.job.status === 'completed', 'completed'],
      [obs.bookings === '[1,1,1]', 'bookings [1,1,1]'],
      [died.length === 0, `both workers alive after the restart (died: ${died.join('; ')})`],
    ],
    [`attempts ${obs.job.attempt}`],
  );
}

/** L: SIGTERM mid-run: the worker drains at the step boundary and hands over without waiting for the TTL. */
export async function windowL(lab: Lab): Promise<WindowRow> {
  const base = { window: 'L', scenario: 'SIGTERM mid-run: drain at the step boundary, hand-over', graph: 'vacation' };
  const { stack } = lab;
  await stack.startWorker('l1');
  const jobId = await lab.submit(lab.spec('L', slow(4_000)));
  await toolsEntered(lab, jobId);
  await stack.startWorker('l2');
  const before = await lab.checkpoints((await stack.ledger.get(jobId)).threadId);
  const code = await stack.stopWorker('l1', 'SIGTERM');
  await lab.waitStatus(jobId, FINAL);
  const obs = await lab.observe(jobId);
  const released = obs.events.find((e) => e.type === 'recovery_required' && e.detail.reason === 'drained');
  const reclaimed = obs.events.find((e) => e.type === 'claimed' && released && e.eventId > released.eventId);
  const gap = released && reclaimed ? reclaimed.at.getTime() - released.at.getTime() : Number.NaN;
  return row(
    base,
    obs,
    before,
    [
      [code === 0, `worker 1 to exit 0 after its drain (got ${code})`],
      [obs.job.status === 'completed' && hasEvent(obs, 'resumed'), 'resumed and completed'],
      [gap < 2_000, `reclaimed within 2 s of the drained release (took ${gap} ms)`],
      [obs.entries === '[1,1,1]' && obs.bookings === '[1,1,1]', 'entries and bookings [1,1,1]: the tools in flight finished before the drain'],
    ],
    [`hand-over ${gap} ms`],
  );
}
