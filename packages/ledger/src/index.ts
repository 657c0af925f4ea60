export { isSealedType, SealingSerializer } from './checkpoint-serde';
export * from './core';
export { isFullySealed, readStoredPayloads, type StoredPayloads } from './crypto-audit';
export { type Fence, FencedPostgresSaver, type FencedSaverRunOptions } from './fenced-saver';
export { type Item, LedgerStore, type LedgerStoreOptions } from './store';
export { type SaverOptions, ThreadSaver } from './thread-saver';
