import { context, defaultTextMapSetter, type Span, SpanKind, type Tracer, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { AdmitRequest } from '@runledger/ledger';
import { withinSpan } from '@runledger/telemetry';
import type { Admitter } from './admitter';

const propagator = new W3CTraceContextPropagator();

/** The span's W3C traceparent, or undefined when the tracer does not sample it. */
function traceparentOf(span: Span): string | undefined {
  const carrier: Record<string, string> = {};
  propagator.inject(trace.setSpan(context.active(), span), carrier, defaultTextMapSetter);
  return carrier.traceparent;
}

/** The request with the span's traceparent, which the ledger stores in the new job's row (admit_jobs.sql). */
const traced = (request: AdmitRequest, traceContext: string | undefined): AdmitRequest => (traceContext ? { ...request, traceContext } : request);

/**
 * Wraps each admission in a `runledger.admit` span (job id, thread, graph, whether it was new and
 * queued) and sends the span's traceparent with the request, so the worker's attempt spans join the
 * admission's trace even when it claims the job at once, and on every later redelivery. Without a
 * tracer, returns `admitter` itself.
 */
export function traceAdmissions(tracer: Tracer | undefined, admitter: Admitter): Admitter {
  if (!tracer) return admitter;
  return {
    close: () => admitter.close(),
    admitMany: (requests, log) =>
      tracer.startActiveSpan('runledger.admit_batch', { kind: SpanKind.PRODUCER, attributes: { 'runledger.batch_size': requests.length } }, async (span) => {
        // Every job of the batch joins the batch's trace.
        const traceContext = traceparentOf(span);
        const requestsTraced = requests.map((r) => traced(r, traceContext));
        return withinSpan(span, () => admitter.admitMany(requestsTraced, log));
      }),
    admit: (request, log) =>
      tracer.startActiveSpan('runledger.admit', { kind: SpanKind.PRODUCER, attributes: { 'runledger.graph': request.graph } }, async (span) => {
        return withinSpan(span, async () => {
          const admitted = await admitter.admit(traced(request, traceparentOf(span)), log);
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
