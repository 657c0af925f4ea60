import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/** The cookies of a request's `Cookie` header, by name (the first of a repeated name wins). */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (name in out) continue;
    try {
      out[name] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      // A malformed value is ignored, as if the cookie were absent.
    }
  }
  return out;
}

export interface CookieOptions {
  path: string;
  /** Seconds; 0 deletes the cookie. */
  maxAgeSeconds: number;
  httpOnly: boolean;
  secure: boolean;
}

/** One `Set-Cookie` value, always SameSite=Strict. */
export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${o.path}`, `Max-Age=${o.maxAgeSeconds}`, 'SameSite=Strict'];
  if (o.httpOnly) parts.push('HttpOnly');
  if (o.secure) parts.push('Secure');
  return parts.join('; ');
}

/** Adds a `Set-Cookie` header, keeping any the reply already has. */
export function appendSetCookie(reply: FastifyReply, cookie: string): void {
  const existing = reply.getHeader('set-cookie');
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing.map(String) : [String(existing)];
  reply.header('set-cookie', [...list, cookie]);
}

/** Constant-time equality of two strings (false when their lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** HMAC-signed opaque values: `<payload>.<signature>`, both base64url. */
export class Signer {
  /** `secret` should hold at least 32 bytes of key material. */
  constructor(private readonly secret: Buffer) {}

  /** A signer whose key is derived from `material` for one `purpose`, so one key never signs two kinds of value. */
  static derive(material: string | Buffer, purpose: string): Signer {
    return new Signer(createHmac('sha256', material).update(`runledger:${purpose}`).digest());
  }

  /** A signer with a random key, valid for this process only. */
  static random(): Signer {
    return new Signer(randomBytes(32));
  }

  sign(payload: string): string {
    return `${payload}.${createHmac('sha256', this.secret).update(payload).digest('base64url')}`;
  }

  /** The payload of a value this signer signed, or undefined when the signature does not match. */
  verify(value: string | undefined): string | undefined {
    if (!value) return undefined;
    const dot = value.lastIndexOf('.');
    if (dot <= 0) return undefined;
    const payload = value.slice(0, dot);
    return safeEqual(this.sign(payload), value) ? payload : undefined;
  }
}
