import type { FastifyReply } from 'fastify';
import { ApiError } from '../http-errors';

/** How many streams, joins and waits one producer process holds open: in all, and per tenant. */
export interface OpenStreamLimits {
  /** Default 2,000 (MAX_OPEN_STREAMS). */
  max: number;
  /** Default 200 (MAX_OPEN_STREAMS_PER_TENANT). */
  perTenant: number;
}

export const DEFAULT_OPEN_STREAM_LIMITS: OpenStreamLimits = { max: 2_000, perTenant: 200 };

/** Counts the open streams, joins and waits of this process, by tenant, against their limits. */
export class OpenStreams {
  private total = 0;
  private readonly byTenant = new Map<string, number>();

  constructor(private readonly limits: OpenStreamLimits = DEFAULT_OPEN_STREAM_LIMITS) {}

  /**
   * Counts one for `tenant` until `reply`'s connection closes. Over either limit throws 429
   * rate_limited (with Retry-After) and counts nothing: call it before anything is written.
   */
  hold(tenant: string, reply: FastifyReply): void {
    const mine = this.byTenant.get(tenant) ?? 0;
    const refusal =
      this.total >= this.limits.max
        ? `This producer already holds its ${this.limits.max} open streams and joins (MAX_OPEN_STREAMS).`
        : mine >= this.limits.perTenant
          ? `This tenant already holds ${this.limits.perTenant} open streams and joins on this producer (MAX_OPEN_STREAMS_PER_TENANT).`
          : undefined;
    if (refusal) {
      reply.header('retry-after', '1');
      throw new ApiError(429, 'rate_limited', `${refusal} Close one, or retry after 1 s.`);
    }
    this.total += 1;
    this.byTenant.set(tenant, mine + 1);
    reply.raw.once('close', () => {
      this.total -= 1;
      const left = (this.byTenant.get(tenant) ?? 1) - 1;
      if (left > 0) this.byTenant.set(tenant, left);
      else this.byTenant.delete(tenant);
    });
  }
}
