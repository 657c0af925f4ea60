import { randomBytes } from 'node:crypto';
import { Signer } from './cookies';

/** The admin browser session cookie, valid under /admin only. */
export const SESSION_COOKIE = 'rl_admin';
export const ADMIN_COOKIE_PATH = '/admin';

/**
 * Admin sessions for browsers, which cannot send a Bearer header on navigation: an HMAC-signed
 * cookie carrying its expiry. The signing key is derived from RUNLEDGER_ADMIN_KEY, so every
 * replica accepts it and changing the admin key ends every session.
 */
export class AdminSessions {
  private readonly signer: Signer;

  constructor(
    adminKey: string,
    private readonly ttlMs: number,
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

  /** True for a value this key issued that has not expired. */
  verify(value: string | undefined): boolean {
    const payload = this.signer.verify(value);
    const expiresAt = Number(payload?.split('-')[1]);
    return payload !== undefined && Number.isFinite(expiresAt) && expiresAt > this.now();
  }
}
