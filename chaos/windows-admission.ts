// Crash windows A, B and M of ARCHITECTURE.md, Failure → behaviour: the producer dies around the ledger commit, and one
// submission arrives twice at once. Real producer and worker processes; the client retries.
import { hasEvent, type Lab, row, VACATION, type WindowRow } from './lab';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FINAL = ['completed', 'failed', 'manual_reconcile'];

/** A: the producer dies with the request unread (SIGSTOP, then SIGKILL): nothing committed; the retry admits one job. */
export async function windowA(lab: Lab): Promise<WindowRow> {
  const base = { window: 'A', scenario: 'producer killed before the ledger commit; the client retries its key', graph: 'vacation' };
  const { stack } = lab;
  await stack.startWorker('a');
  stack.producer?.kill('SIGSTOP');
  const spec = lab.spec('A', VACATION());
  const answered = lab.submit(spec);
  await sleep(500);
  await stack.stopProducer('SIGKILL');
  const before = (await lab.jobsWithKey(spec.key)).length;
  const triesBefore = lab.submissions.retries;
  await stack.startProducer();
  const jobId = await answered;
  const answer = lab.submissions.answers.get(spec.key)?.[0];
  await lab.waitStatus(jobId, FINAL);
  const obs = await lab.observe(jobId);
  const after = (await lab.jobsWithKey(spec.key)).length;
  return row(
    base,
    obs,
    null,
    [
      [before === 0, `no job while the producer was down (found ${before})`],
      [answer?.status === 202, `the retry to be answered 202, a new admission (got ${answer?.status})`],
      [after === 1, `one job for the key (found ${after})`],
      [obs.job.status === 'completed', 'completed'],
      [obs.entries === '[1,1,1]' && obs.bookings === '[1,1,1]', 'entries and bookings [1,1,1]'],
    ],
    [`${lab.submissions.retries - triesBefore + 1} tries without an answer before the restart`],
  );
}

/** B: the producer SIGKILLs itself after the commit, before the queue add: the retry gets 200 and the reconciler delivers. */
export async function windowB(lab: Lab): Promise<WindowRow> {
  const base = { window: 'B', scenario: 'producer killed after the commit, before queue.add; reconciler delivers', graph: 'vacation' };
  const { stack } = lab;
  await stack.startWorker('b');
  await stack.stopProducer('SIGTERM');
  const armed = await stack.startProducer({ RUNLEDGER_TEST_CRASH_AT: 'after_admit_commit' });
  const spec = lab.spec('B', VACATION());
  const answered = lab.submit(spec);
  await armed.exited;
  await stack.stopProducer('SIGKILL');
  const [crashed] = await lab.jobsWithKey(spec.key);
  const before = crashed ? await lab.checkpoints(crashed.threadId) : null;
  const queuedBeforeRestart = crashed ? (await lab.stack.ledger.events(crashed.jobId)).some((e) => e.type === 'enqueued') : true;
  await stack.startProducer();
  const jobId = await answered;
  const answer = lab.submissions.answers.get(spec.key)?.[0];
  await lab.waitStatus(jobId, FINAL, 40_000);
  const obs = await lab.observe(jobId);
  const enqueued = obs.events.find((e) => e.type === 'enqueued');
  const delay = enqueued ? `${((enqueued.at.getTime() - obs.job.acceptedAt.getTime()) / 1000).toFixed(1)} s after admission` : 'never';
  return row(
    base,
    obs,
    before,
    [
      [armed.child.signalCode === 'SIGKILL', 'the producer to die by its own SIGKILL'],
      [crashed?.status === 'accepted' && !queuedBeforeRestart, 'a committed, never-enqueued job after the crash'],
      [answer?.status === 200 && answer.jobId === crashed?.jobId, 'the retry to be answered 200 with the committed job'],
      [(await lab.jobsWithKey(spec.key)).length === 1, 'one job for the key'],
      [obs.job.status === 'completed' && hasEvent(obs, 'enqueued'), 'delivered by the reconciler and completed'],
      [obs.entries === '[1,1,1]' && obs.bookings === '[1,1,1]', 'entries and bookings [1,1,1]'],
    ],
    [`first delivery ${delay}`],
  );
}

/** M: the same submission twice at once with one key: one job, one 202 and one 200. */
export async function windowM(lab: Lab): Promise<WindowRow> {
  const base = { window: 'M', scenario: 'same submission twice at once with one idempotency key', graph: 'vacation' };
  await lab.stack.startWorker('m');
  const spec = { ...lab.spec('M', VACATION()), concurrentDuplicate: true };
  await lab.submissions.submit(spec);
  const answers = lab.submissions.answers.get(spec.key) ?? [];
  const jobId = answers[0]?.jobId ?? '';
  await lab.waitStatus(jobId, FINAL);
  const obs = await lab.observe(jobId);
  const statuses = answers.map((x) => x.status).sort();
  return row(base, obs, null, [
    [answers.length === 2 && new Set(answers.map((x) => x.jobId)).size === 1, 'both answers to name one job'],
    [statuses.join(',') === '200,202', `one 202 and one 200 (got ${statuses.join(',')})`],
    [(await lab.jobsWithKey(spec.key)).length === 1, 'one job for the key'],
    [obs.job.status === 'completed', 'completed'],
    [obs.entries === '[1,1,1]' && obs.bookings === '[1,1,1]', 'entries and bookings [1,1,1]'],
  ]);
}
