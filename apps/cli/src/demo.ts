import { type Job, type JobEvent, RunledgerClient } from '@runledger/client';
import type { Paint } from './format';
import { type LiveSnapshot, LiveView, SETTLED } from './progress';

/** The demo's input: each booking waits a little, so the bookings land one after another. */
export const DEMO_INPUT = { delays: { flight: 600, hotel: 1_200, car: 1_800 } };

export interface DemoOptions {
  baseUrl: string;
  /** Bearer key when the producer checks keys (RUNLEDGER_ADMIN_KEY or one of RUNLEDGER_API_KEYS). */
  apiKey?: string;
  write: (text: string) => void;
  paint: Paint;
  bar: boolean;
  /** Give up watching (the job keeps running) after this long. Default 90 s. */
  timeoutMs?: number;
  /** True when the user pressed Ctrl-C: stop watching. */
  cancelled: () => boolean;
}

function httpSnapshot(job: Job, events: JobEvent[]): LiveSnapshot {
  return {
    status: job.status,
    attempt: job.attempt,
    acceptedAt: new Date(job.acceptedAt),
    events: events.map((e) => ({ ...e, at: new Date(e.at) })),
    effects: job.effects.map((e) => ({ ...e, updatedAt: new Date(e.updatedAt) })),
  };
}

/**
 * Submits a `vacation` job through the HTTP API (the client SDK) and prints its timeline,
 * effects and a progress bar until it completes or stops for a person. Returns the last read
 * of the job, or undefined when watching was cancelled or timed out.
 */
export async function runDemo(o: DemoOptions): Promise<Job | undefined> {
  const client = new RunledgerClient({ baseUrl: o.baseUrl, apiKey: o.apiKey });
  const admission = await client.submit({ graph: 'vacation', input: DEMO_INPUT, metadata: { source: 'npm start demo' } });
  o.write(`  job ${o.paint.bold(admission.jobId)} submitted with POST /v1/jobs\n`);
  const view = new LiveView({ write: o.write, paint: o.paint, bar: o.bar, expectedEffects: 3 });
  const end = Date.now() + (o.timeoutMs ?? 90_000);
  while (!o.cancelled() && Date.now() < end) {
    // The job first, then its events: a status and its event commit together, so events read
    // after a settled status always hold that status's event (read together, the final line
    // could be missing).
    const job = await client.get(admission.jobId);
    const events = await client.events(admission.jobId);
    view.update(httpSnapshot(job, events));
    if (SETTLED.has(job.status)) {
      view.end();
      return job;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  view.end();
  return undefined;
}
