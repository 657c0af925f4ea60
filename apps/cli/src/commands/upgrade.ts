import type { UpgradeResult } from '@runledger/ledger/core';
import { CliError } from '../cli-error';
import type { CliContext } from '../context';
import { actionsOf } from './deliver';

export interface UpgradeOptions {
  graph: string;
  from: string;
  to: string;
  replay: boolean;
  jobId?: string;
  note?: string;
  json?: boolean;
}

/** Why a job was not moved, in words an operator can act on. */
export function refusalText(reason: string, o: Pick<UpgradeOptions, 'graph' | 'from' | 'to'>): string {
  if (reason === 'incompatible')
    return `its checkpoints were written by ${o.graph}@${o.from}, which ${o.graph}@${o.to} does not declare it can resume (resumes); add --replay to run it again from its stored input`;
  if (reason === 'effects_in_doubt') return 'an effect of it is in doubt (pending), so it cannot be replayed; resolve it first';
  if (reason === 'thread_shared') return 'other jobs of its thread wrote checkpoints, which a replay would discard; it cannot be replayed';
  return reason;
}

/**
 * `runledger upgrade --graph G --from v1 --to v2 [--replay] [--job ID]`: moves waiting and parked
 * jobs of G from v1 to v2 (recorded as `upgraded` in each timeline) and delivers the ones ready to
 * run. Exit 1 when any job was refused (each named with the reason), 2 when v2 is unknown or is v1.
 */
export async function upgrade(ctx: CliContext, o: UpgradeOptions): Promise<number> {
  let result: UpgradeResult;
  try {
    result = await ctx.ledger.upgrade({ graph: o.graph, from: o.from, to: o.to, replay: o.replay, jobId: o.jobId, note: o.note });
  } catch (err) {
    if ((err as { code?: string }).code === 'INVALID_REQUEST') throw new CliError((err as Error).message, 2);
    throw err;
  }
  // A moved job still parked (interrupted) needs no delivery: only the others are read and delivered.
  const waiting = result.jobs.filter((j) => j.moved && j.status !== 'interrupted');
  const actions = waiting.length > 0 ? await actionsOf(ctx) : undefined;
  for (const j of waiting) await actions?.upgraded(await ctx.ledger.get(j.jobId));
  if (o.json) {
    ctx.print(JSON.stringify(result));
  } else {
    const { paint } = ctx;
    ctx.print(
      `${o.graph}: ${o.from} → ${o.to} (${result.compatible ? `${o.to} resumes ${o.from}` : 'not declared compatible'}; ${result.live ? 'a live worker serves it' : paint.yellow('no live worker serves it yet')})`,
    );
    if (result.jobs.length === 0) ctx.print(`  no waiting or parked job of ${o.graph}@${o.from}`);
    for (const j of result.jobs) {
      ctx.print(
        j.moved
          ? `  ${paint.bold(j.jobId)} moved${j.replayed ? ' (replays from its input)' : ''}: ${j.status}`
          : `  ${paint.bold(j.jobId)} ${paint.red('refused')}: ${refusalText(j.refused ?? '', o)}`,
      );
    }
  }
  return result.jobs.some((j) => !j.moved) ? 1 : 0;
}
