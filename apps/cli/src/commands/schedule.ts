import { type Cron, Crons, type NewCron } from '@runledger/ledger/core';
import type { CliContext } from '../context';
import { table, when } from '../format';

/** `runledger crons`: every cron with its schedule, policy, next time and latest outcome. */
export async function listCrons(ctx: CliContext, json: boolean): Promise<void> {
  const all = new Crons(ctx.ledger);
  const crons: Cron[] = [];
  let cursor: string | undefined;
  do {
    const page = await all.list(undefined, { cursor });
    crons.push(...page.crons);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  if (json) return ctx.print(JSON.stringify(crons, null, 2));
  if (crons.length === 0) return ctx.print('no crons (add one with `runledger cron-add <graph> --schedule "0 3 * * *"`)');
  const rows = crons.map((c) => [
    c.cronId,
    c.graph,
    `${c.schedule} (${c.timezone})`,
    c.missed,
    c.enabled ? 'on' : 'off',
    when(c.nextFireAt),
    c.lastOutcome ? `${c.lastOutcome} ${when(c.lastScheduledAt ?? null)}` : '-',
  ]);
  ctx.print(table(['cron', 'graph', 'schedule', 'missed', 'enabled', 'next', 'last'], rows));
}

/** `runledger cron-add <graph> --schedule EXPR …`: stores a cron; producers fire it. */
export async function addCron(ctx: CliContext, def: NewCron): Promise<void> {
  const cron = await new Crons(ctx.ledger).create(def);
  ctx.print(`cron ${ctx.paint.bold(cron.cronId)} added: ${cron.graph} at "${cron.schedule}" (${cron.timezone}), next ${cron.nextFireAt.toISOString()}`);
}

/** `runledger cron-enable|cron-disable <id>`; enabling restarts it from now. */
export async function setCronEnabled(ctx: CliContext, cronId: string, enabled: boolean): Promise<void> {
  const cron = await new Crons(ctx.ledger).update(cronId, { enabled });
  ctx.print(`cron ${ctx.paint.bold(cron.cronId)} ${enabled ? `enabled, next ${cron.nextFireAt.toISOString()}` : 'disabled'}`);
}

/** `runledger cron-delete <id>`: removes the cron and its firing records (its jobs stay). */
export async function deleteCron(ctx: CliContext, cronId: string): Promise<void> {
  await new Crons(ctx.ledger).remove(cronId);
  ctx.print(`cron ${ctx.paint.bold(cronId)} deleted`);
}

/** `runledger limits`: every graph limit, with its running and held-back jobs now. */
export async function listLimits(ctx: CliContext, json: boolean): Promise<void> {
  const limits = await ctx.ledger.limits.list();
  if (json) return ctx.print(JSON.stringify(limits, null, 2));
  if (limits.length === 0) return ctx.print('no graph limits (set one with `runledger limit-set <graph> --max 5 --interval-ms 1000`)');
  const rows = limits.map((l) => [
    l.graph,
    l.maxPerInterval === null ? '-' : `${l.maxPerInterval} / ${l.intervalMs} ms`,
    l.maxConcurrent === null ? '-' : String(l.maxConcurrent),
    String(l.running),
    String(l.heldBack),
  ]);
  ctx.print(table(['graph', 'runs per interval', 'at once', 'running', 'held back'], rows));
}

/** `runledger limit-set <graph> [--max N --interval-ms MS] [--concurrent N]`. */
export async function setLimit(ctx: CliContext, graph: string, limit: { maxPerInterval?: number; intervalMs?: number; maxConcurrent?: number }): Promise<void> {
  await ctx.ledger.limits.set(graph, limit);
  ctx.print(`graph ${ctx.paint.bold(graph)} limited (workers apply it within a sweep interval)`);
}

/** `runledger limit-remove <graph>`. */
export async function removeLimit(ctx: CliContext, graph: string): Promise<void> {
  ctx.print((await ctx.ledger.limits.remove(graph)) ? `graph ${graph} no longer limited` : `graph ${graph} had no limit`);
}
