// The deploy fault: a rolling deploy of a new graph version in the order infra/README.md gives
// (start vN workers, switch admission to vN, retire the v(N-1) workers), with one old worker
// SIGKILLed instead of drained, then the operator's `upgrade` of whatever the old version left
// waiting or parked. Whether any worker ran a step of a version it did not serve is read from the
// ledger at the end (chaosAudit.wrongVersionSteps), not from what the harness believes here.
import type { Job, JobStatus } from '../packages/ledger/src/index';
import type { Rng } from './prng';
import type { Stack } from './stack';
import type { Supervisor } from './supervisor';

export interface DeployRecord {
  at: string;
  from: string;
  to: string;
  /** Worker ids of the new version, and of the old one retired (the SIGKILLed one named apart). */
  started: string[];
  retired: string[];
  sigkilled: string | undefined;
  /** Jobs the operator moved from an old version to the new one, and moves refused (job: reason). */
  moved: number;
  refused: string[];
  /** Jobs still on an old version when the operator gave up (none expected). */
  leftBehind: string[];
  durationMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Graphs the chaos workload runs (chaos/workload.ts). */
const GRAPHS = ['echo', 'vacation', 'approval'];
/** Statuses of a job that still has to run (or be resumed) on some version. */
const OPEN: JobStatus[] = ['accepted', 'recovery_required', 'interrupted', 'starting', 'running'];

export class DeployFault {
  readonly deploys: DeployRecord[] = [];
  /** SIGTERMed old workers that did not exit 0 (a drain that did not end cleanly). */
  readonly uncleanDrains: Array<{ target: string; detail: string }> = [];

  constructor(
    private readonly supervisor: Supervisor,
    private readonly rng: Rng,
  ) {}

  private get stack(): Stack {
    return this.supervisor.stack;
  }

  /** One rolling deploy, v(N-1) → vN; returns the fault's one-line detail. */
  async deploy(): Promise<string> {
    const { stack, supervisor } = this;
    const began = Date.now();
    const from = stack.buildId;
    const to = `v${Number(from.slice(1)) + 1}`;
    const old = [...supervisor.slots];
    const fresh = old.map((s) => `${s.replace(/v\d+$/, '')}${to}`);
    const rec: DeployRecord = {
      at: new Date().toISOString(),
      from,
      to,
      started: [],
      retired: [],
      sigkilled: undefined,
      moved: 0,
      refused: [],
      leftBehind: [],
      durationMs: 0,
    };

    // 1. vN workers, beside the old ones (busy while starting, so neither a fault nor the watchdog touches them).
    await Promise.all(
      fresh.map(async (slot) => {
        stack.slotBuild.set(slot, to);
        supervisor.busy.add(slot);
        supervisor.slots.push(slot);
        try {
          await supervisor.startWorker(slot);
          rec.started.push(stack.workerIdOf(slot) ?? slot);
        } catch {
          // Recorded as an unexpected exit: the watchdog keeps restarting the slot.
        } finally {
          supervisor.busy.delete(slot);
        }
      }),
    );

    // 2. Admission records vN from now on: the producer restarts with the new build id.
    stack.buildId = to;
    await new Promise<void>((done) =>
      supervisor.ownProducer(async () => {
        try {
          await stack.stopProducer('SIGTERM');
          await supervisor.startProducer({});
        } finally {
          done();
        }
      }),
    );

    // 3. Retire the old workers one by one: SIGTERM (drain), one of them SIGKILL mid-run.
    const killed = this.rng.pick(old);
    for (const slot of old) {
      // Wait for a fault in progress on it (a restart, a pause, a partition) to finish.
      for (const end = Date.now() + 300_000; supervisor.busy.has(slot) && Date.now() < end; ) await sleep(100);
      supervisor.busy.add(slot);
      const p = stack.workers.get(slot);
      const id = stack.workerIdOf(slot) ?? slot;
      const signal = slot === killed ? 'SIGKILL' : 'SIGTERM';
      const code = await stack.stopWorker(slot, signal);
      if (signal === 'SIGTERM' && p && code !== 0) this.uncleanDrains.push({ target: id, detail: `exit ${code ?? p.child.signalCode}` });
      supervisor.slots.splice(supervisor.slots.indexOf(slot), 1);
      supervisor.busy.delete(slot);
      if (signal === 'SIGKILL') rec.sigkilled = id;
      else rec.retired.push(id);
    }

    // 4. The operator moves what the old versions left (waiting, handed back, parked; leases of the
    // killed worker once they expire) to vN, which declares it can resume them (chaos/graphs.ts).
    for (const end = Date.now() + 120_000; ; ) {
      const left = await oldVersionJobs(stack, to).catch(() => undefined);
      if (left?.length === 0) break;
      if (Date.now() > end) {
        rec.leftBehind = (left ?? []).map((j) => `${j.jobId} ${j.graph}@${j.graphVersion} ${j.status}`);
        break;
      }
      const refused = new Map<string, string>();
      const pairs = new Set((left ?? []).filter((j) => !['starting', 'running'].includes(j.status)).map((j) => `${j.graph}@${j.graphVersion}`));
      for (const pair of pairs) {
        const [graph = '', version = ''] = pair.split('@');
        const up = await stack.ledger.upgrade({ graph, from: version, to, note: `chaos deploy ${from} → ${to}` }).catch(() => undefined);
        for (const j of up?.jobs ?? []) {
          if (j.moved) rec.moved++;
          else refused.set(j.jobId, `${j.jobId}: ${j.refused}`);
        }
      }
      rec.refused = [...refused.values()];
      await sleep(500);
    }
    rec.durationMs = Date.now() - began;
    this.deploys.push(rec);
    return `${from} → ${to}: started ${rec.started.join(', ')}; drained ${rec.retired.join(', ')}; SIGKILLed ${rec.sigkilled}; ${rec.moved} job(s) moved to ${to}${rec.refused.length ? `, ${rec.refused.length} refused` : ''}`;
  }
}

/** Jobs of the chaos graphs still to run on a version other than `current`. */
async function oldVersionJobs(stack: Stack, current: string): Promise<Job[]> {
  const out: Job[] = [];
  for (const graph of GRAPHS) {
    for (const status of OPEN) {
      let cursor: string | undefined;
      do {
        const page = await stack.ledger.list({ graph, status, limit: 500, cursor });
        out.push(...page.jobs.filter((j) => j.graphVersion !== null && j.graphVersion !== current));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    }
  }
  return out;
}
