export { type AdmitOptions, admit, type InTransactionAdmission } from './admit';
export { RunledgerClient, type RunledgerClientOptions, type WaitOptions } from './client';
export { RunledgerApiError, WaitTimeoutError } from './errors';
export * from './types';
