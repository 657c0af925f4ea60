import { randomUUID } from 'node:crypto';
import { RunledgerApiError, WaitTimeoutError } from './errors';
import { type Admission, type BatchItemResult, type Job, type JobEvent, type JobPage, type ListQuery, PARKED, type SubmitRequest, TERMINAL } from './types';

export interface RunledgerClientOptions {
  /** The producer's address, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Retries of submit and reads after a network error or a 5xx answer. Default 3. */
  retries?: number;
  /** First retry delay, doubled each time. Default 200 ms. */
  retryDelayMs?: number;
  /** Limit for one HTTP request. Default 10 000 ms. */
  requestTimeoutMs?: number;
  /** The fetch to use. Default: the global fetch. */
  fetch?: typeof fetch;
}

export interface WaitOptions {
  /** Give up after this long (WaitTimeoutError). Default 60 000 ms. */
  timeoutMs?: number;
  /** Time between reads. Default 500 ms. */
  pollMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const path = (jobId: string, action = '') => `/v1/jobs/${encodeURIComponent(jobId)}${action}`;

/** A typed client of the Runledger HTTP API; every failure is a RunledgerApiError. */
export class RunledgerClient {
  private readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly options: RunledgerClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchFn = options.fetch ?? globalThis.fetch;
  }

  /**
   * Submits a job. Without `idempotencyKey` one is generated, and it is the same across this
   * call's retries, so a retry after a lost answer returns the job admitted the first time.
   * Throws RunledgerApiError: 409 `idempotency_conflict` / `thread_busy`, 422 `unknown_graph` / `invalid_input` …
   */
  async submit(request: SubmitRequest): Promise<Admission> {
    const idempotencyKey = request.idempotencyKey ?? randomUUID();
    const { status, body } = await this.call<Omit<Admission, 'created' | 'idempotencyKey'>>('POST', '/v1/jobs', { ...request, idempotencyKey }, true);
    return { ...body, created: status === 202, idempotencyKey };
  }

  /**
   * Submits up to 500 jobs (MAX_BATCH_JOBS) in one request (POST /v1/jobs/batch) and returns
   * one result per job, in order: a refused job (409, 400, 422) is a result with `ok: false`
   * and does not refuse the others. Jobs without `idempotencyKey` get one generated, the same
   * across this call's retries, so a retry after a lost answer admits nothing twice. Throws
   * RunledgerApiError only when the whole batch is refused (400 more than 500 jobs, 413, 503 after retries).
   */
  async submitMany(requests: readonly SubmitRequest[]): Promise<BatchItemResult[]> {
    const jobs = requests.map((r) => ({ ...r, idempotencyKey: r.idempotencyKey ?? randomUUID() }));
    type Answer = { results: Array<{ status: number; body: Omit<Admission, 'created' | 'idempotencyKey'> & { error?: { code: string; message: string } } }> };
    const { body } = await this.call<Answer>('POST', '/v1/jobs/batch', { jobs }, true);
    return body.results.map(({ status, body: item }, i): BatchItemResult => {
      if (status === 200 || status === 202)
        return { ok: true, status, admission: { ...item, created: status === 202, idempotencyKey: jobs[i]!.idempotencyKey } };
      return { ok: false, status, error: item.error ?? { code: 'http_error', message: `job ${i} answered ${status}` } };
    });
  }

  /** Reads a job with its effects. Throws RunledgerApiError 404 `not_found`. */
  async get(jobId: string): Promise<Job> {
    return (await this.call<Job>('GET', path(jobId), undefined, true)).body;
  }

  /** Lists jobs, newest first; pass `nextCursor` back as `cursor` for the next page. */
  async list(query: ListQuery = {}): Promise<JobPage> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const qs = params.size > 0 ? `?${params}` : '';
    return (await this.call<JobPage>('GET', `/v1/jobs${qs}`, undefined, true)).body;
  }

  /** The job's timeline, oldest first. */
  async events(jobId: string): Promise<JobEvent[]> {
    return (await this.call<{ events: JobEvent[] }>('GET', path(jobId, '/events'), undefined, true)).body.events;
  }

  /**
   * Polls until the job is terminal (completed, failed, cancelled) or parked for a person
   * (interrupted, manual_reconcile) and returns it. Throws WaitTimeoutError after `timeoutMs`.
   */
  async wait(jobId: string, options: WaitOptions = {}): Promise<Job> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    const pollMs = options.pollMs ?? 500;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const job = await this.get(jobId);
      if (TERMINAL.includes(job.status) || PARKED.includes(job.status)) return job;
      if (Date.now() + pollMs > deadline) throw new WaitTimeoutError(jobId, job.status, timeoutMs);
      await sleep(pollMs);
    }
  }

  /** Cancels a job that has not finished. Throws RunledgerApiError 409 `invalid_state` when it has. */
  async cancel(jobId: string, note?: string): Promise<Job> {
    return (await this.call<Job>('POST', path(jobId, '/cancel'), { note })).body;
  }

  /** Continues an interrupted job; `value` is what interrupt() returns. 409 `invalid_state` unless interrupted. */
  async resume(jobId: string, value: unknown): Promise<Job> {
    return (await this.call<Job>('POST', path(jobId, '/resume'), { resume: value ?? null })).body;
  }

  /** Runs a manual_reconcile job again after a person checked its effects in doubt. */
  async replay(jobId: string, note?: string): Promise<Job> {
    return (await this.call<Job>('POST', path(jobId, '/replay'), { note })).body;
  }

  /** Closes a manual_reconcile job as completed or failed, with a note saying why. */
  async resolve(jobId: string, outcome: 'completed' | 'failed', note: string): Promise<Job> {
    return (await this.call<Job>('POST', path(jobId, '/resolve'), { outcome, note })).body;
  }

  private async call<T>(method: string, route: string, body: unknown, retry = false): Promise<{ status: number; body: T }> {
    const attempts = retry ? (this.options.retries ?? 3) + 1 : 1;
    let delay = this.options.retryDelayMs ?? 200;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once<T>(method, route, body);
      } catch (err) {
        if (!(err instanceof RunledgerApiError) || !err.retryable || attempt >= attempts) throw err;
        await sleep(delay);
        delay = Math.min(delay * 2, 5_000);
      }
    }
  }

  private async once<T>(method: string, route: string, body: unknown): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    let response: Response;
    try {
      response = await this.fetchFn(`${this.baseUrl}${route}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.requestTimeoutMs ?? 10_000),
      });
    } catch (err) {
      throw new RunledgerApiError(0, 'network_error', `${method} ${route} got no answer: ${(err as Error).message}`, { cause: err });
    }
    const text = await response.text().catch(() => '');
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (response.ok) return { status: response.status, body: parsed as T };
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new RunledgerApiError(response.status, error?.code ?? 'http_error', error?.message ?? `${method} ${route} answered ${response.status}`);
  }
}
