import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { DeliveryData } from '@runledger/queue';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';

/** Where Bull Board is mounted. `/admin` itself is left for the ledger dashboard. */
export const BULL_BOARD_PATH = '/admin/queues';

/**
 * Mounts Bull Board for the delivery queue. Queue jobs carry only `{ jobId }`; each one links
 * to its ledger view (Bull Board's per-queue `externalJobUrl`), which is the truth about it.
 */
export async function bullBoard(app: FastifyInstance, opts: { queue: Queue<DeliveryData>; ledgerJobUrl: (jobId: string) => string }): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  const adapter = new BullMQAdapter(opts.queue, {
    description: 'Deliveries: references to ledger jobs. The ledger decides who runs a job; open a job’s ledger view for its state.',
    externalJobUrl: (job) => {
      const jobId = (job.data as Partial<DeliveryData> | undefined)?.jobId;
      return jobId ? { href: opts.ledgerJobUrl(jobId), displayText: `Ledger: ${jobId}` } : { href: BULL_BOARD_PATH };
    },
  });
  createBullBoard({ queues: [adapter], serverAdapter });
  await app.register(serverAdapter.registerPlugin(), { prefix: BULL_BOARD_PATH });
}
