// The reconciler's and the cron ticker's timer loop: a pass never overlaps itself (ticks while it
// runs are skipped, runOnce joins it), a failed pass is reported and the next one runs, and stop
// waits for the pass in flight. Judged by what the passes saw, never by how long they took.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/support/db';
import { PeriodicPass } from '../src/index';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('PeriodicPass', () => {
  it('runs one pass at a time, joins runOnce to it, and stop waits for it', async () => {
    let started = 0;
    let ended = 0;
    let gate = deferred();
    const pass = new PeriodicPass(
      async () => {
        started++;
        await gate.promise;
        ended++;
        return started;
      },
      5,
      () => {},
    );
    pass.start();
    await waitFor('the first pass', async () => started === 1);
    // Many ticks come and go while the pass waits: none starts another.
    await new Promise((r) => setTimeout(r, 50));
    expect(started).toBe(1);
    const joined = pass.runOnce();
    gate.resolve();
    expect(await joined).toBe(1);
    await waitFor('the next tick to run a pass', async () => started >= 2);
    gate = deferred();
    await waitFor('a pass waiting on the new gate', async () => started > ended);
    let stopped = false;
    const stopping = pass.stop().then(() => {
      stopped = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    expect(ended).toBe(started);
    // Stopped: no tick starts another pass.
    await new Promise((r) => setTimeout(r, 30));
    expect(ended).toBe(started);
  });

  it('reports a failed pass and runs the next one; interval 0 never ticks', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const failing = new PeriodicPass(
      async () => {
        runs++;
        if (runs === 1) throw new Error('first pass fails');
      },
      5,
      (err) => errors.push(err),
    );
    failing.start();
    await waitFor('a pass after the failed one', async () => runs >= 2);
    await failing.stop();
    expect((errors[0] as Error).message).toBe('first pass fails');

    let never = 0;
    const off = new PeriodicPass(
      async () => {
        never++;
      },
      0,
      () => {},
    );
    off.start();
    await new Promise((r) => setTimeout(r, 30));
    expect(never).toBe(0);
    await off.runOnce();
    expect(never).toBe(1);
    await off.stop();
  });

  it('runs a first pass after firstAfterMs, long before its interval, and stop clears that timer too', async () => {
    let passes = 0;
    const pass = new PeriodicPass(
      async () => {
        passes++;
      },
      3_600_000,
      () => {},
    );
    pass.start(5);
    await waitFor('the first pass', async () => passes === 1);
    await pass.stop();
    const stopped = new PeriodicPass(
      async () => {
        passes++;
      },
      3_600_000,
      () => {},
    );
    stopped.start(20);
    await stopped.stop();
    await new Promise((r) => setTimeout(r, 60));
    expect(passes).toBe(1);
  });
});
