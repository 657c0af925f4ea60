import { randomBytes } from 'node:crypto';
import { Signer } from './cookies';

/** The admin browser session cookie, valid under /admin only. */
export const SESSION_COOKIE = 'rl_admin';
export const ADMIN_COOKIE_PATH = '/admin';

/** Where logouts are kept so every producer sharing them refuses a logged-out cookie (the ledger, in the app). */
export interface SessionRevocations {
  revoke(sessionId: string, expiresAt: Date): Promise<void>;
  isRevoked(sessionId: string): Promise<boolean>;
}

/**
 * Admin sessions for browsers, which cannot send a Bearer header on navigation: an HMAC-signed
 * cookie carrying its expiry and a random session id. The signing key is derived from
 * RUNLEDGER_ADMIN_KEY, so every replica accepts it and changing the admin key ends every session;
 * a logout records the session id in `revocations`, shared by the replicas, which then refuse it.
 */
export class AdminSessions {
  private readonly signer: Signer;

  constructor(
    adminKey: string,
    private readonly ttlMs: number,
    private readonly revocations?: SessionRevocations,
    private readonly now: () => number = Date.now,
  ) {
    this.signer = Signer.derive(adminKey, 'admin-session-v1');
  }

  /** Seconds until a new session expires (the cookie's Max-Age). */
  get maxAgeSeconds(): number {
    return Math.floor(this.ttlMs / 1000);
  }

  /** A new session cookie value. */
  issue(): string {
    const expiresAt = this.now() + this.ttlMs;
    return this.signer.sign(`v1-${expiresAt}-${randomBytes(12).toString('base64url')}`);
  }

  /** The id and expiry of a value this key issued that has not expired; undefined otherwise. */
  private parse(value: string | undefined): { id: string; expiresAt: number } | undefined {
    // The id is base64url, which has '-' in it: split off the version and expiry only.
    const [, expiry, id] = /^v1-(\d+)-([\w-]+)$/.exec(this.signer.verify(value) ?? '') ?? [];
    const expiresAt = Number(expiry);
    if (!id || !Number.isFinite(expiresAt) || expiresAt <= this.now()) return undefined;
    return { id, expiresAt };
  }

  /** True for a value this key issued that has not expired (signature and expiry only; see isActive). */
  verify(value: string | undefined): boolean {
    return this.parse(value) !== undefined;
  }

  /** True for a value that verifies and was not logged out. Throws when the revocations cannot be read. */
  async isActive(value: string | undefined): Promise<boolean> {
    const session = this.parse(value);
    return session !== undefined && !(await this.revocations?.isRevoked(session.id));
  }

  /** Ends the session of `value` on every replica sharing the revocations; a value that does not verify is ignored. */
  async revoke(value: string | undefined): Promise<void> {
    const session = this.parse(value);
    if (session) await this.revocations?.revoke(session.id, new Date(session.expiresAt));
  }
}
