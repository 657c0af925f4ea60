/** What a redacted value reads as in a log line. */
export const REDACTED = '[redacted]';

/**
 * Field names (compared case-insensitively, `-` and `_` ignored) whose values never reach a log:
 * credentials, and job payloads that may carry personal data.
 */
export const SENSITIVE_FIELDS: readonly string[] = [
  'authorization',
  'cookie',
  'setcookie',
  'password',
  'apikey',
  'apikeys',
  'adminkey',
  'secret',
  'encryptionkey',
  'csrftoken',
  'input',
  'result',
  'resume',
  'resumevalue',
  'interrupt',
  'metadata',
  'payload',
  'body',
];

const sensitive = new Set(SENSITIVE_FIELDS);
const normalise = (field: string) => field.toLowerCase().replace(/[-_]/g, '');

// scheme://user:password@host → scheme://user:[redacted]@host, wherever it appears in a text.
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)([^\s@/]+)@/gi;

/** `text` with the password of every connection string in it replaced. */
export function redactConnectionStrings(text: string): string {
  return text.replace(URL_PASSWORD, `$1${REDACTED}@`);
}

/**
 * The password of a connection string, as a secret to mask wherever it appears in a log line;
 * undefined when it has none (or is not a URL), and when it is the URL's own user or database
 * name (`postgres://postgres:postgres@…/postgres`, the embedded server's): that word is logged
 * anyway, and masking it everywhere would hide harmless text such as the queue backend's name
 * (`postgres`). Inside a connection string a password is always masked (redactConnectionStrings).
 */
export function connectionStringPassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    const password = decodeURIComponent(u.password);
    const plain = [decodeURIComponent(u.username), decodeURIComponent(u.pathname.slice(1))];
    return password === '' || plain.includes(password) ? undefined : password;
  } catch {
    return undefined;
  }
}

/** Masks secrets in log lines: see createRedactor. */
export interface Redactor {
  /** `text` with every known secret and connection-string password replaced by REDACTED. */
  text(text: string): string;
  /**
   * A copy of `value` for logging: sensitive fields replaced, strings passed through `text`,
   * Errors turned into `{ type, message, stack }`. Class instances other than Error are returned
   * as they are (loggers serialise those themselves). Nesting deeper than 8 levels is cut.
   */
  value(value: unknown): unknown;
}

const MIN_SECRET_LENGTH = 6;

/**
 * A redactor for one process, knowing its secrets (API keys, the admin key, encryption keys,
 * connection-string passwords). Secrets shorter than 6 characters are ignored: masking them
 * would blank out ordinary words.
 */
export function createRedactor(secrets: Iterable<string | undefined>): Redactor {
  const known = [...new Set([...secrets].filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH))].sort(
    (a, b) => b.length - a.length,
  );
  const text = (input: string): string => {
    let out = input;
    for (const secret of known) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return redactConnectionStrings(out);
  };
  const value = (input: unknown, depth = 0): unknown => {
    if (typeof input === 'string') return text(input);
    if (input === null || typeof input !== 'object') return input;
    if (depth >= 8) return '[nested too deep]';
    if (input instanceof Error) {
      return { type: input.name, message: text(input.message), stack: input.stack ? text(input.stack) : undefined };
    }
    if (Array.isArray(input)) return input.map((v) => value(v, depth + 1));
    const proto = Object.getPrototypeOf(input);
    if (proto !== Object.prototype && proto !== null) return input;
    return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, sensitive.has(normalise(k)) ? REDACTED : value(v, depth + 1)]));
  };
  return { text, value: (v) => value(v) };
}
