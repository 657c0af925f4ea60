export type Level = 'debug' | 'info' | 'warn' | 'error';
const order: Record<Level | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** A structured one-line JSON logger on stderr; fields carry job id, thread, attempt and token. */
export function createLogger(base: Record<string, unknown>, minLevel: Level | 'silent' = 'info') {
  return (level: Level, msg: string, fields: Record<string, unknown> = {}) => {
    if (order[level] < order[minLevel]) return;
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...base, ...fields })}\n`);
  };
}
