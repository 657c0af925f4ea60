import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** A process the supervisor runs. */
export interface ChildSpec {
  /** Short name, also its log file: `worker-1` → `<logDir>/worker-1.log`. */
  name: string;
  /** Absolute entry file; a TypeScript one (running from the repository's sources) runs with `node --conditions=@runledger/source --import tsx`. */
  entry: string;
  args?: string[];
  env: NodeJS.ProcessEnv;
}

export interface Managed {
  spec: ChildSpec;
  child: ChildProcess;
  pid: number;
  startedAt: number;
  logFile: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface SupervisorOptions {
  /** The project directory: every child's working directory (where its langgraph.json is found). */
  root: string;
  logDir: string;
  /** Called when a child exits while nobody asked it to stop. */
  onUnexpectedExit: (m: Managed, code: number | null, signal: NodeJS.Signals | null) => void;
}

// The guard sits beside this module: parent-guard.ts in the sources, parent-guard.mjs when built.
const GUARD = pathToFileURL(path.join(import.meta.dirname, `parent-guard${path.extname(import.meta.filename)}`)).href;

/** Signals a whole process group (a detached child and anything it started); ignores a gone group. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** The last `n` lines of a log file (to show why a child died). */
export function tailLog(file: string, n = 6): string[] {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n);
  } catch {
    return [];
  }
}

/**
 * Runs child processes for `npm start`: each in its own process group (so a terminal's Ctrl-C
 * reaches only the supervisor, which then stops them in order), with its output appended to a
 * log file, and an IPC channel whose loss makes the child stop itself (see parent-guard.ts).
 */
export class Supervisor {
  private readonly children = new Map<string, Managed>();
  private readonly stopping = new Set<string>();
  private closed = false;

  constructor(private readonly options: SupervisorOptions) {}

  /** Starts `spec`; throws once `close()` began, so a start-up racing a Ctrl-C starts nothing new. */
  start(spec: ChildSpec): Managed {
    if (this.closed) throw new Error('stopping: not starting new processes');
    const logFile = path.join(this.options.logDir, `${spec.name}.log`);
    const fd = openSync(logFile, 'a');
    writeSync(fd, `\n=== ${new Date().toISOString()} npm start: ${spec.name} (${spec.entry}) ===\n`);
    const loader = spec.entry.endsWith('.ts') ? ['--conditions=@runledger/source', '--import', 'tsx'] : [];
    const child = spawn(process.execPath, [...loader, '--import', GUARD, spec.entry, ...(spec.args ?? [])], {
      cwd: this.options.root,
      env: spec.env,
      detached: true,
      stdio: ['ignore', fd, fd, 'ipc'],
    });
    closeSync(fd);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', () => resolve({ code: 127, signal: null }));
    });
    const managed: Managed = { spec, child, pid: child.pid ?? -1, startedAt: Date.now(), logFile, exited };
    this.children.set(spec.name, managed);
    void exited.then(({ code, signal }) => {
      if (this.children.get(spec.name) === managed) this.children.delete(spec.name);
      signalGroup(managed.pid, 'SIGKILL'); // anything the child left behind in its group
      if (!this.stopping.has(spec.name) && !this.closed) this.options.onUnexpectedExit(managed, code, signal);
    });
    return managed;
  }

  get(name: string): Managed | undefined {
    return this.children.get(name);
  }

  /** Pids of every running child. */
  pids(): number[] {
    return [...this.children.values()].map((m) => m.pid);
  }

  /** Sends `signal`, waits up to `graceMs` for the exit, then kills the child's process group. */
  async stop(name: string, graceMs: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const m = this.children.get(name);
    if (!m) return;
    this.stopping.add(name);
    m.child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), graceMs);
    });
    if ((await Promise.race([m.exited, late])) === 'late') {
      signalGroup(m.pid, 'SIGKILL');
      await m.exited;
    }
    clearTimeout(timer);
    this.stopping.delete(name);
  }

  /** From now on no child starts and exits are expected. */
  close(): void {
    this.closed = true;
  }

  /** SIGKILL to every child's process group at once (the second Ctrl-C). */
  killAll(): void {
    this.closed = true;
    for (const m of this.children.values()) signalGroup(m.pid, 'SIGKILL');
  }
}
