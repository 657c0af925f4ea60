import type { Queryable } from './db';
import { run } from './sql';

/**
 * Records the logout of an admin browser session, valid until `expiresAt`, for every producer
 * sharing this database. Throws LedgerError DATABASE_UNAVAILABLE when PostgreSQL is unreachable.
 */
export async function revokeAdminSession(db: Queryable, sessionId: string, expiresAt: Date): Promise<void> {
  await run(db, 'revoke_admin_session', [sessionId, expiresAt]);
}

/** True when the admin session was ended by a logout. Throws like revokeAdminSession. */
export async function isAdminSessionRevoked(db: Queryable, sessionId: string): Promise<boolean> {
  return (await run(db, 'find_admin_session_revocation', [sessionId])).rowCount === 1;
}
