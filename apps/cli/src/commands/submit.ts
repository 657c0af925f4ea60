import { reachedQueue } from '@runledger/queue';
import { findLangGraphConfig, loadGraphs } from '@runledger/runtime';
import { CliError } from '../cli-error';
import type { CliContext } from '../context';
import { deliverSoon, deliveryLine } from './deliver';

export interface SubmitOptions {
  graph: string;
  input: unknown;
  threadId?: string;
  idempotencyKey?: string;
  maxAttempts?: number;
  json?: boolean;
}

/**
 * `runledger submit <graph>`: validates the input against the graph registry, commits the
 * admission to the ledger, then queues its delivery (best effort, as the producer does).
 */
export async function submit(ctx: CliContext, o: SubmitOptions): Promise<void> {
  const graphs = await loadGraphs({
    modulePath: ctx.env.graphsModule,
    configPath: findLangGraphConfig(ctx.env.configPath, process.cwd()),
    buildId: ctx.env.buildId,
    builtIns: ctx.env.builtIns,
    notice: () => {},
  });
  const graph = graphs.get(o.graph);
  if (!graph) throw new CliError(`Unknown graph "${o.graph}"; known graphs: ${[...graphs.keys()].join(', ')}.`, 2);
  const problem = graph.validateInput?.(o.input);
  if (problem) throw new CliError(`Bad --input for ${o.graph}: ${problem}`, 2);

  const { job, created } = await ctx.ledger.admit({
    graph: o.graph,
    graphVersion: graph.version,
    input: o.input,
    threadId: o.threadId,
    idempotencyKey: o.idempotencyKey,
    maxAttempts: o.maxAttempts,
  });
  const enqueued = created ? await deliverSoon(ctx, job, true) : await reachedQueue(await ctx.queue(), ctx.ledger, job);
  if (o.json) {
    ctx.print(JSON.stringify({ jobId: job.jobId, threadId: job.threadId, status: job.status, created, enqueued }));
    return;
  }
  const { paint } = ctx;
  ctx.print(
    created
      ? `${paint.green('accepted')} job ${paint.bold(job.jobId)} (graph ${job.graph}, thread ${job.threadId})`
      : `already admitted under key ${o.idempotencyKey}: job ${paint.bold(job.jobId)} is ${job.status}`,
  );
  if (created) ctx.print(`  ${deliveryLine(ctx, enqueued)}`);
  ctx.print(`  follow it: npx runledger watch ${job.jobId}`);
}
