import { context, defaultTextMapSetter, SpanKind, type Tracer, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { type AdmitRequest, type Ledger, recordTraceContext } from '@runledger/ledger';
import { withinSpan } from '@runledger/telemetry';
import type { Admitter } from './admitter';

const propagator = new W3CTraceContextPropagator();

/** The W3C traceparent of each admission in flight, by its request object (so batches find theirs). */
const traceparents = new WeakMap<AdmitRequest, string>();

/**
 * A view of `ledger` whose admissions also store the admission span's traceparent on each new
 * job, before the admitter delivers it, so the worker's attempt spans join the admission's trace
 * even when it claims the job at once, and on every later redelivery. Other verbs are the
 * ledger's own. Without a tracer, returns `ledger` itself.
 */
export function recordingTraceContext(ledger: Ledger, tracer: Tracer | undefined): Ledger {
  if (!tracer) return ledger;
  const recording = Object.create(ledger) as Ledger;
  recording.admit = async (request, db) => {
    const result = await ledger.admit(request, db);
    const traceparent = traceparents.get(request);
    // Inside the caller's transaction when it passed one, so the context commits with the job.
    if (result.created && traceparent) await recordTraceContext(db ?? ledger.pool, result.job.jobId, traceparent);
    return result;
  };
  return recording;
}

/**
 * Wraps each admission in a `runledger.admit` span (job id, thread, graph, whether it was new and
 * queued) and hands the span's traceparent to `recordingTraceContext`. Without a tracer, returns
 * `admitter` itself.
 */
export function traceAdmissions(tracer: Tracer | undefined, admitter: Admitter): Admitter {
  if (!tracer) return admitter;
  return {
    close: () => admitter.close(),
    admitMany: (requests, log) =>
      tracer.startActiveSpan('runledger.admit_batch', { kind: SpanKind.PRODUCER, attributes: { 'runledger.batch_size': requests.length } }, async (span) => {
        const carrier: Record<string, string> = {};
        propagator.inject(trace.setSpan(context.active(), span), carrier, defaultTextMapSetter);
        // Every job of the batch joins the batch's trace.
        if (carrier.traceparent) for (const request of requests) traceparents.set(request, carrier.traceparent);
        return withinSpan(span, () => admitter.admitMany(requests, log));
      }),
    admit: (request, log) =>
      tracer.startActiveSpan('runledger.admit', { kind: SpanKind.PRODUCER, attributes: { 'runledger.graph': request.graph } }, async (span) => {
        const carrier: Record<string, string> = {};
        propagator.inject(trace.setSpan(context.active(), span), carrier, defaultTextMapSetter);
        if (carrier.traceparent) traceparents.set(request, carrier.traceparent);
        return withinSpan(span, async () => {
          const admitted = await admitter.admit(request, log);
          span.setAttributes({
            'runledger.job_id': admitted.job.jobId,
            'runledger.thread_id': admitted.job.threadId,
            'runledger.created': admitted.created,
            'runledger.enqueued': admitted.enqueued,
          });
          return admitted;
        });
      }),
  };
}

/** What buildApp takes for tracing, beside AppOptions. */
export interface ObservabilityOptions {
  /** Traces admissions (startTracing's tracer); default none: tracing off. */
  tracer?: Tracer;
}
