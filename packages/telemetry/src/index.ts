import { context, type Span, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';

export interface TracingOptions {
  /** `service.name` of the spans. */
  serviceName: string;
  /** OTLP/HTTP base URL (OTEL_EXPORTER_OTLP_ENDPOINT, e.g. http://collector:4318); default http://localhost:4318. */
  endpoint?: string;
  /** Export here instead (tests: an InMemorySpanExporter), one span at a time. */
  exporter?: SpanExporter;
}

export interface Tracing {
  tracer: Tracer;
  /** Flushes the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry tracing for this process: an AsyncLocalStorage context manager (so the
 * active span follows awaits) and a tracer provider exporting over OTLP/HTTP, registered as the
 * global provider. Call once, from main.ts (or a test).
 */
export function startTracing(options: TracingOptions): Tracing {
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: `${(options.endpoint ?? 'http://localhost:4318').replace(/\/$/, '')}/v1/traces` });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [options.exporter ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return { tracer: provider.getTracer('runledger'), shutdown: () => provider.shutdown() };
}

/**
 * Runs `fn` inside `span` and ends the span: a thrown error is recorded on it (exception and
 * ERROR status) and rethrown.
 */
export async function withinSpan<T>(span: Span, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * The log line format every Runledger process writes (pino options, also Fastify's logger):
 * `"level":"info"` as a name and `"time":"2026-12-01T18:00:00.000Z"` in ISO 8601 UTC, so the
 * producer's and the workers' lines read, sort and filter alike.
 */
export const LOG_FORMAT = {
  timestamp: () => `,"time":"${new Date().toISOString()}"`,
  formatters: { level: (label: string) => ({ level: label }) },
};
