export { isSealedType, SealingSerializer } from './checkpoint-serde';
export * from './core';
export { isFullySealed, readStoredPayloads, type StoredPayloads } from './crypto-audit';
export { type Fence, FencedPostgresSaver, type FencedSaverRunOptions } from './fenced-saver';
export {
  type Item,
  LedgerStore,
  type LedgerStoreOptions,
  type SearchItem,
  type StoreGet,
  type StoreIndex,
  type StorePut,
  type StoreSearch,
  type StoreTtl,
} from './store';
export { type SaverOptions, ThreadSaver } from './thread-saver';
