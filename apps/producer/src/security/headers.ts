import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Content-Security-Policy of every response: only this origin's scripts, styles and frames,
 * images also as data: URIs (Swagger UI and Bull Board draw icons that way), never framed.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The security headers every response carries (see securityHeaders). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  // Answers carry tenants' jobs: no shared or browser cache keeps them, unless a route says otherwise.
  'cache-control': 'no-store',
};

/**
 * onSend: the security headers on every response (API, dashboard, Bull Board, docs, errors). A
 * header a route already set (a stricter CSP, a cache policy for static files) is kept.
 */
export async function securityHeaders(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) if (!reply.hasHeader(name)) reply.header(name, value);
}
