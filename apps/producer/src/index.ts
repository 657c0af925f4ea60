// The producer as a library: `createServer` for a process of your own, `buildApp` to mount the
// routes on pools and queues you already hold.
export { buildApp } from './app';
export { ConfigError, type ProducerConfig, parseConfig } from './config';
export { type CreateServerOptions, createServer, type ProducerServer } from './create-server';
export type { AppOptions } from './options';
export { MAX_DELAY_MS, PRIORITY_RANGE, RUN_AT_PAST_TOLERANCE_MS, scheduledRunAt } from './schedule';
