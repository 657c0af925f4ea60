import { describe, expect, it } from 'vitest';
import { cachedProbe, READINESS_CACHE_MS } from '../src/readiness';

describe('the /readyz answer cache', () => {
  it('probes once per window, counted from the answer, and shares a probe still running', async () => {
    let clock = 0;
    let probes = 0;
    let release: (() => void) | undefined;
    const ready = cachedProbe(
      () => {
        probes++;
        return new Promise<number>((resolve) => {
          release = () => resolve(probes);
        });
      },
      READINESS_CACHE_MS,
      () => clock,
    );
    const first = ready();
    clock = 5_000; // still running: later callers wait for the same probe, however long it takes
    const second = ready();
    release?.();
    expect([await first, await second]).toEqual([1, 1]);
    clock += READINESS_CACHE_MS - 1;
    expect(await ready()).toBe(1);
    clock += 1;
    const third = ready();
    release?.();
    expect(await third).toBe(2);
    expect(probes).toBe(2);
  });
});
