// `npm start` runs this supervisor under npm, a shell and tsx. A process manager, an IDE's stop
// button or a container stop signals npm alone, and npm exits without waiting for its script:
// the supervisor and everything it started would keep serving. So the supervisor watches the
// chain of processes up to npm and stops itself (in order) when any link goes.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The parent pid of `pid` (Linux /proc, else `ps`); undefined when it is gone or cannot be read. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    try {
      const ppid = Number(execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' }).trim());
      return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
    } catch {
      return undefined;
    }
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    try {
      return execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' });
    } catch {
      return '';
    }
  }
}

/** npm names itself `npm start` (process.title); run as a script its command line holds its path. */
const isNpm = (command: string, npmExecPath: string) => command.includes(npmExecPath) || /(^|[\s/])(npm|npx)(-cli\.js)?(\s|$)/.test(command);

/**
 * This process's ancestors from its parent up to the npm (or npx) that launched it, known by its
 * command line (`npm_execpath`, which npm sets for its scripts, says there is one); just the
 * parent when npm is not among the first few ancestors (tsx or node started this directly).
 */
export function launcherChain(npmExecPath: string | undefined): number[] {
  const chain = [process.ppid];
  if (!npmExecPath) return chain;
  for (let pid = process.ppid; chain.length <= 6 && pid > 1; ) {
    if (isNpm(commandOf(pid), npmExecPath)) return chain;
    const parent = parentOf(pid);
    if (parent === undefined || parent <= 1) break;
    chain.push(parent);
    pid = parent;
  }
  return [process.ppid];
}

/** The first link of `chain` found gone: a link whose child got a new parent (it died, reaped or not), or a last link that exited. */
function goneLink(chain: readonly number[]): number | undefined {
  if (process.ppid !== chain[0]) return chain[0];
  for (let i = 0; i + 1 < chain.length; i++) if (parentOf(chain[i] as number) !== chain[i + 1]) return chain[i + 1];
  const last = chain.at(-1) as number;
  try {
    process.kill(last, 0);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? undefined : last;
  }
}

/** Calls `onGone(pid)` once a link of `chain` is gone, checking every `everyMs`; the timer does not keep the process alive. */
export function watchLauncher(chain: readonly number[], onGone: (pid: number) => void, everyMs = 500): void {
  const timer = setInterval(() => {
    const gone = goneLink(chain);
    if (gone === undefined) return;
    clearInterval(timer);
    onGone(gone);
  }, everyMs);
  timer.unref();
}
