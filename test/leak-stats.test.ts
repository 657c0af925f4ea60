// The soak's slope arithmetic (chaos/leak-stats.ts): a flat series reads 0 per hour, a growing
// one its rate, and the warm-up is left out of the fit.
import { describe, expect, it } from 'vitest';
import { type Sample, slope, slopeTable } from '../chaos/leak-stats';

describe('leak slopes', () => {
  it('fits the least-squares slope', () => {
    expect(
      slope([
        [0, 1],
        [1, 3],
        [2, 5],
      ]),
    ).toBeCloseTo(2);
    expect(
      slope([
        [0, 4],
        [1, 4],
        [2, 4],
      ]),
    ).toBe(0);
    expect(slope([[0, 4]])).toBeNaN();
  });

  it('reports per hour after the warm-up, as a share of the mean', () => {
    // RSS jumps in the first 10 minutes, then stays flat; fds grow 1 per minute throughout.
    const samples: Sample[] = Array.from({ length: 61 }, (_, m) => ({ minute: m, values: { rss: m < 10 ? 50 + 5 * m : 100, fds: 20 + m } }));
    const table = slopeTable(samples, 0.2);
    expect(table[0]).toBe('after the first 20 % (49 of 61 samples):');
    expect(table.find((l) => l.startsWith('| rss |'))).toBe('| rss | 50.0 | 100 | 100 | 0.0 | 0.0 % |');
    expect(table.find((l) => l.startsWith('| fds |'))).toBe('| fds | 20.0 | 80.0 | 56.0 | 60.0 | 107.1 % |');
  });
});
