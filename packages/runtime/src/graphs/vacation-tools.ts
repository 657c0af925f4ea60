import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolRunnableConfig } from '@langchain/core/tools';
import { tool } from '@langchain/core/tools';
import { type BookingKind, type ExampleBooking, ExampleBookings } from '@runledger/ledger';
import { z } from 'zod';
import { abortableSleep, runContext, traceNode } from '../context';
import { effect, type Reconciliation, toolEffectKey } from '../effect';

/** Milliseconds per kind of booking. */
export type PerKindMs = Partial<Record<BookingKind, number>>;

/** How the vacation graph's tools behave: the graph's input (validated in vacation.ts). */
export interface BookingOptions {
  /** Wait before calling the provider (aborted with the run). */
  delays?: PerKindMs;
  /** Wait after the provider booked and before the effect is recorded: crash window F. */
  afterCall?: PerKindMs;
  /** The provider deduplicates on the idempotency key. Default true. */
  providerIdempotent?: boolean;
  /** Ask the provider about bookings in doubt. Default false. */
  reconcile?: boolean;
  /** Record `node_entered` for each tool body entry. */
  traceNodes?: boolean;
}

/** What a booking tool returns and the effects ledger stores. */
export interface BookingConfirmation {
  kind: BookingKind;
  bookingId: number;
  confirmation: string;
}

const confirm = (b: ExampleBooking): BookingConfirmation => ({
  kind: b.kind,
  bookingId: b.bookingId,
  confirmation: `${b.kind.toUpperCase()}-${b.bookingId}`,
});

async function reconcileBooking(provider: ExampleBookings, kind: BookingKind, key: string): Promise<Reconciliation<BookingConfirmation>> {
  const booking = await provider.findBooking(kind, key);
  return booking ? { outcome: 'committed', result: confirm(booking) } : { outcome: 'absent' };
}

/**
 * The tool `name` that books `kind` through the effects ledger under the effect key of its
 * tool call. Run it with the model's tool call (`tool.invoke(toolCall, config)`).
 */
export function bookingTool(kind: BookingKind, name: string, options: BookingOptions) {
  return tool(
    async (_args: Record<string, never>, config: ToolRunnableConfig) => {
      const ctx = runContext(config);
      const toolCallId = config.toolCall?.id;
      if (!toolCallId) throw new Error(`${name} must be invoked with the model's tool call, which carries its tool_call_id.`);
      await traceNode(config, name, options.traceNodes === true);
      const delay = options.delays?.[kind];
      if (delay) await abortableSleep(delay, config.signal);
      const provider = new ExampleBookings(ctx.ledger.pool);
      const enforceKey = options.providerIdempotent !== false;
      const spec = {
        key: toolEffectKey(ctx, toolCallId),
        name,
        idempotent: enforceKey,
        reconcile: options.reconcile === true ? (key: string) => reconcileBooking(provider, kind, key) : undefined,
      };
      const result = await effect(ctx, spec, async (idempotencyKey) => {
        const { booking } = await provider.book(kind, { jobId: ctx.jobId, threadId: ctx.threadId, idempotencyKey, enforceKey });
        const wait = options.afterCall?.[kind];
        // Not abortable: LangGraph aborts siblings when one task fails, and an abort here would
        // make a booking that exists look failed (and so bookable again).
        if (wait) await sleep(wait);
        return confirm(booking);
      });
      return JSON.stringify(result);
    },
    { name, description: `Books the ${kind} of this (simulated) vacation.`, schema: z.object({}).strict() },
  );
}
