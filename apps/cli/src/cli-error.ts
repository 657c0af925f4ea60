/**
 * An error the CLI reports as one line on stderr, exiting with `exitCode`
 * (2 for a usage mistake, 1 for everything else).
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Parses a JSON flag value or throws a usage CliError naming the flag. */
export function parseJsonFlag(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${flag} is not valid JSON (${(err as Error).message}); quote it for the shell, e.g. ${flag} '{"steps":3}'.`, 2);
  }
}

/** Parses a positive integer flag value or throws a usage CliError naming the flag. */
export function parseIntFlag(flag: string, text: string, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new CliError(`${flag} must be an integer from ${min} to ${max}, got "${text}".`, 2);
  return n;
}
