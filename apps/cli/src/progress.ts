import { compact, offset, type Paint } from './format';

/** What the live view needs of a job, whether read over HTTP (`npm start`) or from the ledger (`watch`). */
export interface LiveSnapshot {
  status: string;
  attempt: number;
  acceptedAt: Date;
  events: Array<{ at: Date; type: string; attempt: number; workerId: string | null; detail: Record<string, unknown> }>;
  effects: Array<{ key: string; name: string; status: string; result: unknown; error: unknown; updatedAt: Date }>;
}

export interface LiveViewOptions {
  write: (text: string) => void;
  paint: Paint;
  /** Redraw a progress bar on the last line (terminals only). */
  bar: boolean;
  /** Effects the job is expected to make (3 bookings for `vacation`); default: those seen so far. */
  expectedEffects?: number;
}

/** States after which a job changes only through a person (or never). */
export const SETTLED = new Set(['completed', 'failed', 'cancelled', 'interrupted', 'manual_reconcile']);

/** One event's detail in a few words. */
export function describeEvent(e: LiveSnapshot['events'][number]): string {
  const d = e.detail;
  const error = (d.error as { message?: string } | undefined)?.message;
  switch (e.type) {
    case 'accepted':
    case 'enqueued':
      return '';
    case 'claimed':
      return `attempt ${e.attempt} by ${e.workerId ?? '?'}`;
    case 'recovery_required':
      return [d.reason, error].filter(Boolean).join(': ');
    case 'failed':
      return compact(d.message ?? error ?? d, 80);
    case 'interrupted':
      return compact((d.interrupt as { value?: unknown }[] | undefined)?.[0]?.value ?? d.interrupt ?? '', 80);
    case 'node_entered':
      return String(d.node ?? '');
    case 'waiting_for_thread':
      return `job ${String(d.blockedBy)} holds the thread`;
    default:
      return Object.keys(d).length > 0 ? compact(d, 80) : '';
  }
}

function effectOutcome(e: LiveSnapshot['effects'][number]): string {
  if (e.status === 'committed') {
    const r = e.result as { confirmation?: string } | null;
    return r && typeof r === 'object' && r.confirmation ? r.confirmation : compact(e.result, 60);
  }
  if (e.status === 'failed') return compact(e.error, 60);
  return 'outcome not known yet';
}

/**
 * Prints a job's timeline as it grows: each new event and each effect's status change on its
 * own line, and (on a terminal) a progress bar of committed effects and the job's status that
 * is redrawn in place below them.
 */
export class LiveView {
  private eventsShown = 0;
  private readonly effectStatus = new Map<string, string>();
  private barShown = false;

  constructor(private readonly options: LiveViewOptions) {}

  update(s: LiveSnapshot): void {
    const { paint } = this.options;
    // Events and effect changes interleave in time order, so a line never appears before its cause.
    const lines: Array<{ at: Date; text: string }> = [];
    for (const e of s.events.slice(this.eventsShown)) {
      const type = e.type === 'completed' ? paint.green(e.type) : e.type === 'failed' || e.type === 'lease_lost' ? paint.red(e.type) : e.type;
      const detail = describeEvent(e);
      lines.push({ at: e.at, text: detail ? `${type.padEnd(18 + type.length - e.type.length)} ${paint.dim(detail)}` : type });
    }
    this.eventsShown = Math.max(this.eventsShown, s.events.length);
    for (const e of s.effects) {
      if (this.effectStatus.get(e.key) === e.status) continue;
      this.effectStatus.set(e.key, e.status);
      const mark = e.status === 'committed' ? paint.green('✓') : e.status === 'failed' ? paint.red('✗') : paint.yellow('…');
      lines.push({ at: e.updatedAt, text: `${mark} effect ${e.name} ${e.status}: ${effectOutcome(e)}` });
    }
    lines.sort((a, b) => a.at.getTime() - b.at.getTime());
    this.clearBar();
    if (lines.length > 0) this.options.write(`${lines.map((l) => `  ${paint.dim(offset(l.at, s.acceptedAt).padStart(7))}  ${l.text}`).join('\n')}\n`);
    if (this.options.bar) this.drawBar(s);
  }

  /** Removes the bar so the caller can print below the timeline. */
  end(): void {
    this.clearBar();
  }

  private drawBar(s: LiveSnapshot): void {
    const { paint } = this.options;
    const total = Math.max(this.options.expectedEffects ?? 0, s.effects.length);
    const done = s.effects.filter((e) => e.status === 'committed').length;
    const cells = total > 0 ? `[${paint.green('■'.repeat(done))}${'□'.repeat(total - done)}] ${done}/${total} effects · ` : '';
    this.options.write(`  ${cells}${paint.bold(s.status)} · attempt ${s.attempt}`);
    this.barShown = true;
  }

  private clearBar(): void {
    if (!this.barShown) return;
    this.options.write('\r\x1b[2K');
    this.barShown = false;
  }
}
