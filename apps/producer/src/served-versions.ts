import { graphVersionKey, type Ledger, listLiveServes, noLiveWorkerServes } from '@runledger/ledger';

/** How often the live workers' announcements are read again (one read per admission would cost a round trip each). */
const READ_EVERY_MS = 1_000;

/** Tells an admission whether a live worker serves its graph and version, from a read at most a second old. */
export interface ServedVersions {
  /** A warning for the admission's answer when live workers announce what they serve and none serves this pair; undefined otherwise. */
  warning(graph: string, version: string | null): string | undefined;
}

/**
 * Reads what live workers serve in the background, at most once a second while admissions ask;
 * never awaited, so an admission costs no round trip for it. Until the first read answers, and
 * while no live worker announces anything (none started yet, or an older release), nothing is
 * said: such a job is delivered as usual and waits in the queue.
 */
export function watchServedVersions(ledger: Pick<Ledger, 'pool'>): ServedVersions {
  let serves = new Set<string>();
  let readAt = 0;
  const read = () => {
    // Stamped at the start: at most one read a second, however long each takes.
    readAt = Date.now();
    void listLiveServes(ledger.pool).then(
      (keys) => {
        serves = keys;
      },
      () => {}, // PostgreSQL down: admissions fail on their own; keep the last answer.
    );
  };
  return {
    warning(graph, version) {
      if (Date.now() - readAt >= READ_EVERY_MS) read();
      if (serves.size === 0 || serves.has(graphVersionKey(graph, version))) return undefined;
      return `${noLiveWorkerServes(graph, version)}: the job waits in the ledger and is delivered when a worker serving it starts`;
    },
  };
}
