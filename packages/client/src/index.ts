// The HTTP SDK: no dependency beyond Node. Admitting inside your own PostgreSQL transaction is
// `@runledger/client/transaction`, which needs @runledger/ledger installed beside it.
export { RunledgerClient, type RunledgerClientOptions, type WaitOptions } from './client';
export { RunledgerApiError, WaitTimeoutError } from './errors';
export * from './types';
