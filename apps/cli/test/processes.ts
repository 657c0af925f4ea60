import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Live processes of an `npm start` whose RUNLEDGER_HOME is `dir`: started with it in their
 * environment (npm, the supervisor, producer, workers), or naming it in their command line or
 * working directory (PostgreSQL's backends run in their data dir).
 */
export function processesUsing(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (cmdline.includes(dir) || cwd.startsWith(dir) || environ.includes(`RUNLEDGER_HOME=${dir}`)) found.push(`${pid} ${cmdline.trim()}`);
    } catch {
      // exited while we looked
    }
  }
  return found;
}
