import { distance } from 'fastest-levenshtein';

/**
 * The candidate closest to a mistyped `word`, or undefined when none is close enough to be a
 * plausible typo (a third of the word's length in edits, rounded up, at most 3).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const limit = Math.min(3, Math.ceil(word.length / 3));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** ` Did you mean "x"?` when a candidate is close, else the fallback hint. */
export function didYouMean(word: string, candidates: readonly string[], fallback: string): string {
  const match = closest(word, candidates);
  return match === undefined ? fallback : ` Did you mean "${match}"?`;
}
