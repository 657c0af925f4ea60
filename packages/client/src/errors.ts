/**
 * An error answer of the Runledger API (`{ error: { code, message } }`), or `status` 0 with
 * code `network_error` when no answer arrived at all.
 */
export class RunledgerApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'RunledgerApiError';
  }

  /**
   * Worth retrying with the same idempotency key: no answer, a request the server did not
   * receive in full in time (408: nothing was admitted), or a server-side failure. A retry with
   * the same key never admits twice, whatever the first attempt did.
   */
  get retryable(): boolean {
    return this.status === 0 || this.status === 408 || this.status >= 500;
  }
}

/** `wait` gave up before the job reached a terminal or parked state. */
export class WaitTimeoutError extends Error {
  constructor(
    readonly jobId: string,
    readonly lastStatus: string,
    timeoutMs: number,
  ) {
    super(`Job ${jobId} is still ${lastStatus} after ${timeoutMs} ms; wait longer or check its events.`);
    this.name = 'WaitTimeoutError';
  }
}
