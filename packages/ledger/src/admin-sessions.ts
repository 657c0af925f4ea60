import { type Queryable, wrapDbError } from './db';
import { sql } from './sql';

/**
 * Records the logout of an admin browser session, valid until `expiresAt`, for every producer
 * sharing this database. Throws LedgerError DATABASE_UNAVAILABLE when PostgreSQL is unreachable.
 */
export async function revokeAdminSession(db: Queryable, sessionId: string, expiresAt: Date): Promise<void> {
  try {
    await db.query(sql('revoke_admin_session'), [sessionId, expiresAt]);
  } catch (err) {
    throw wrapDbError(err);
  }
}

/** True when the admin session was ended by a logout. Throws like revokeAdminSession. */
export async function isAdminSessionRevoked(db: Queryable, sessionId: string): Promise<boolean> {
  try {
    return (await db.query(sql('find_admin_session_revocation'), [sessionId])).rowCount === 1;
  } catch (err) {
    throw wrapDbError(err);
  }
}
