// `npm run worker` / `runledger worker`: one worker process configured from the environment
// (the public interface in README.md). The set-up lives in create-worker.ts, shared with the createWorker library call.
import { createWorker, WorkerStartError } from './create-worker';

try {
  await createWorker({ env: process.env }).run();
} catch (err) {
  console.error(`runledger worker: ${(err as Error).message}`);
  process.exit(err instanceof WorkerStartError ? err.exitCode : 1);
}
