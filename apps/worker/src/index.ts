export { Reconciler, type SweepReport } from '@runledger/queue';
export { parseWorkerEnv, type WorkerEnv } from './config';
export { type CreateWorkerOptions, createWorker, type WorkerProcess, WorkerStartError } from './create-worker';
export type { DeliveryOutcome } from './delivery-outcome';
export { executeDelivery, redeliver } from './execute';
export { LeaseKeeper } from './lease-keeper';
export { type Decision, decide } from './recovery';
export { RunledgerWorker, type WorkerOptions } from './runledger-worker';
