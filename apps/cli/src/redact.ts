/** A database URL as host:port/database, without user or password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return '(unparsable DATABASE_URL)';
  }
}
