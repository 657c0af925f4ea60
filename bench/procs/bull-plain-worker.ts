// A plain BullMQ worker with BullMQ's defaults (lockDuration 30 s, stalledInterval 30 s,
// maxStalledCount 1): the comparison for recovery after SIGKILL. Its processor prints
// {"active": jobId, "at": ms} and then works for ten minutes. Prints "ready" once connected.
// Env: REDIS_URL, QUEUE_PREFIX.
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
const worker = new Worker(
  'stall-probe',
  async (job) => {
    console.log(JSON.stringify({ active: job.id, at: Date.now() }));
    await new Promise((r) => setTimeout(r, 600_000));
  },
  { connection, prefix: process.env.QUEUE_PREFIX },
);
worker.on('error', () => {});
await worker.waitUntilReady();
console.log('ready');
process.once('SIGTERM', () => process.exit(0));
