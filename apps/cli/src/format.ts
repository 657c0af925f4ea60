import { conversationOf } from '@runledger/ledger/core';
// Plain-text formatting for the terminal: tables, ages, compact JSON, optional colour.

/** ANSI colours, or identity functions when `enabled` is false (not a TTY, or NO_COLOR set). */
export function createPaint(enabled: boolean) {
  const wrap = (open: number, close: number) => (s: string) => (enabled ? `\x1b[${open}m${s}\x1b[${close}m` : s);
  return { bold: wrap(1, 22), dim: wrap(2, 22), red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39), cyan: wrap(36, 39) };
}

export type Paint = ReturnType<typeof createPaint>;

/** True when `stream` is an interactive terminal and the user did not ask for NO_COLOR. */
export function wantsColor(stream: NodeJS.WriteStream): boolean {
  return stream.isTTY === true && !process.env.NO_COLOR;
}

/** Left-aligned columns separated by two spaces; the header row first. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** "4s ago", "3m ago", "2h ago", "5d ago". */
export function ago(at: Date, now = new Date()): string {
  const s = Math.max(0, Math.round((now.getTime() - at.getTime()) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

/** Seconds with one decimal: "+1.4s". */
export function offset(at: Date, from: Date): string {
  return `+${((at.getTime() - from.getTime()) / 1000).toFixed(1)}s`;
}

/** JSON on one line, cut to `max` characters with an ellipsis. */
export function compact(value: unknown, max = 100): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A timestamp as ISO text, or "-" when absent. */
export function when(at: Date | null): string {
  return at ? at.toISOString() : '-';
}

/** A job's result in one line: a LangGraph state with messages shows its last message's text. */
export function summarizeResult(result: unknown, max = 120): string {
  const last = conversationOf(result)?.at(-1);
  if (last?.text) return `"${compact(last.text, max - 2)}"`;
  return compact(result, max);
}
