// The HTTP admission baseline: a Fastify endpoint that only adds a queue message (the same
// options a Runledger delivery uses) and answers 202. No validation, no ledger, no logging.
// Env: PORT, REDIS_URL, QUEUE_PREFIX. Prints "listening" when ready.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { openQueue } from '../../packages/queue/src/index';

const queue = openQueue({ backend: 'redis', redisUrl: process.env.REDIS_URL, prefix: process.env.QUEUE_PREFIX });
const app = Fastify({ logger: false });

app.post('/v1/jobs', async (_request, reply) => {
  const jobId = randomUUID();
  await queue.add('run', { jobId }, { removeOnComplete: true, removeOnFail: 1000, attempts: 1, jobId });
  return reply.code(202).send({ jobId, status: 'accepted', enqueued: true });
});

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('listening');
const close = async () => {
  await app.close();
  await queue.close();
  process.exit(0);
};
process.once('SIGTERM', () => void close());
