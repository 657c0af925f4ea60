// The producer as a library: `createServer` for a process of your own, `buildApp` to mount the
// routes on pools and queues you already hold.
export { buildApp } from './app';
export { ConfigError, type ProducerConfig, parseConfig } from './config';
export { type CreateServerOptions, createServer, type ProducerServer } from './create-server';
export type { AppOptions } from './options';
