import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { type Ledger, readTraceContext } from '@runledger/ledger';
import { withinSpan } from '@runledger/telemetry';
import type { DeliveryOutcome } from './delivery-outcome';

const propagator = new W3CTraceContextPropagator();

/** Wraps one delivery (RunledgerWorker's `aroundDelivery`). */
export type DeliveryWrapper = (jobId: string, run: () => Promise<DeliveryOutcome>) => Promise<DeliveryOutcome>;

/**
 * Runs each delivery in a `runledger.attempt` span whose parent is the admission's span: its
 * traceparent is read from the ledger (stored at admission), so every attempt of a job, on any
 * worker and after any redelivery, lands in the admission's trace. The graph's node spans
 * (instrumentGraphs) nest inside. A job admitted without tracing starts a trace of its own.
 */
export function traceDeliveries(tracer: Tracer, ledger: Ledger): DeliveryWrapper {
  return async (jobId, run) => {
    const traceparent = await readTraceContext(ledger.pool, jobId).catch(() => null);
    const parent = traceparent ? propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter) : ROOT_CONTEXT;
    const attributes = { 'runledger.job_id': jobId };
    return tracer.startActiveSpan('runledger.attempt', { kind: SpanKind.CONSUMER, attributes }, parent, (span) =>
      withinSpan(span, async () => {
        const outcome = await run();
        span.setAttributes({ 'runledger.outcome': outcome.outcome });
        if (outcome.outcome === 'refused') {
          span.updateName('runledger.delivery_refused');
          span.setAttribute('runledger.refusal', outcome.reason);
        } else if (outcome.decision) span.setAttribute('runledger.decision', outcome.decision);
        if (outcome.outcome === 'failed' || outcome.outcome === 'lease_lost' || outcome.outcome.startsWith('database_'))
          span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.outcome });
        return outcome;
      }),
    );
  };
}

/** Composes delivery wrappers: the first given is the outermost. */
export function composeDeliveryWrappers(...wrappers: Array<DeliveryWrapper | undefined>): DeliveryWrapper {
  const present = wrappers.filter((w): w is DeliveryWrapper => w !== undefined);
  return (jobId, run) => present.reduceRight<() => Promise<DeliveryOutcome>>((inner, wrap) => () => wrap(jobId, inner), run)();
}
