// `@runledger/client/transaction`: admission inside the caller's PostgreSQL transaction. Kept off
// the main entry so a service that only submits over HTTP installs no server-side package.
export { type AdmitOptions, admit, type InTransactionAdmission } from './admit';
