// Real producer and worker processes for the chaos harness: spawned with tsx like `npm run
// worker`, their output kept in log files and scanned for stale-write rejections.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

/** What the workers' logs say about stale writes (ARCHITECTURE.md, invariant 4). */
export interface RejectionCounts {
  /** "lease lost" lines: a run stopped because a fenced write or a heartbeat renewal was refused. */
  leaseLostStops: number;
  /** Checkpoint and pending-write transactions rolled back by the fence (sum of `rejectedCheckpointWrites`). */
  rejectedCheckpointWrites: number;
  /** Log lines naming LeaseLostError (warnings of writes refused outside a run's final report). */
  leaseLostErrorLines: number;
}

export const emptyRejections = (): RejectionCounts => ({ leaseLostStops: 0, rejectedCheckpointWrites: 0, leaseLostErrorLines: 0 });

/** A worker's line saying it stopped a run (lease lost, or PostgreSQL out of reach). */
export interface LeaseLostLine {
  /** When the harness read it. */
  at: number;
  jobId: string | undefined;
  token: number | undefined;
  rejectedCheckpointWrites: number;
}

/** One spawned process; its output goes to `<logDir>/<name>.log`. */
export class Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly rejections = emptyRejections();
  /** Each "lease lost" line: when it was read, the job and token it names and the checkpoint writes the fence refused in that run. */
  readonly leaseLost: LeaseLostLine[] = [];
  /** `<jobId>:<token>` of every run the worker began (its "decision" line). */
  readonly runsBegun = new Set<string>();
  private readonly log: WriteStream;
  private tail = '';
  private partial = '';
  private readonly watchers: Array<{ text: string; resolve: () => void }> = [];

  constructor(
    readonly name: string,
    entry: string,
    env: NodeJS.ProcessEnv,
    logDir: string,
    /** A command the process runs under, e.g. `ip netns exec <ns>` (it execs, so the pid and signals stay the process's). */
    prefix: string[] = [],
  ) {
    mkdirSync(logDir, { recursive: true });
    this.log = createWriteStream(path.join(logDir, `${name}.log`));
    const command = [...prefix, process.execPath, '--conditions=@runledger/source', '--import', 'tsx', path.join(root, entry)];
    this.child = spawn(command[0] as string, command.slice(1), {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (d: Buffer) => this.onData(d));
    this.child.stderr?.on('data', (d: Buffer) => this.onData(d));
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => {
        this.log.end(`\n[chaos] ${name} exited code=${code} signal=${signal}\n`);
        resolve(code);
      }),
    );
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last few KB of output, for a failure report. */
  get recent(): string {
    return this.tail;
  }

  kill(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }

  /** Resolves when a line containing `text` appears (or has appeared in the recent output). */
  waitForLine(text: string, timeoutMs: number): Promise<void> {
    if (this.tail.includes(text)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no "${text}" within ${timeoutMs} ms\n${this.tail.slice(-2000)}`)), timeoutMs);
      this.watchers.push({
        text,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
      void this.exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited before "${text}"\n${this.tail.slice(-2000)}`));
      });
    });
  }

  private onData(d: Buffer): void {
    const text = d.toString('utf8');
    this.log.write(text);
    this.tail = (this.tail + text).slice(-8_000);
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.scan(line);
  }

  private scan(line: string): void {
    // A run the worker began (it logs its decision once it holds the claim's answer).
    if (line.includes('"msg":"decision: ')) {
      const run = /"jobId":"([^"]+)".*"token":(\d+)/.exec(line);
      if (run) this.runsBegun.add(`${run[1]}:${run[2]}`);
    }
    // A run the worker stopped: its lease was lost, or PostgreSQL was out of reach before it began.
    if (line.includes('lease lost') || line.includes('stopping without further writes')) {
      this.rejections.leaseLostStops++;
      const m = /"rejectedCheckpointWrites":(\d+)/.exec(line);
      if (m) this.rejections.rejectedCheckpointWrites += Number(m[1]);
      const token = /"token":(\d+)/.exec(line)?.[1];
      this.leaseLost.push({
        at: Date.now(),
        jobId: /"jobId":"([^"]+)"/.exec(line)?.[1],
        token: token === undefined ? undefined : Number(token),
        rejectedCheckpointWrites: Number(m?.[1] ?? 0),
      });
    } else if (line.includes('LeaseLostError')) {
      this.rejections.leaseLostErrorLines++;
    }
    for (let i = this.watchers.length - 1; i >= 0; i--) {
      const w = this.watchers[i];
      if (w && line.includes(w.text)) {
        this.watchers.splice(i, 1);
        w.resolve();
      }
    }
  }
}

/** Sums the rejection counts of processes (live and dead). */
export function sumRejections(procs: Iterable<Proc>): RejectionCounts {
  const total = emptyRejections();
  for (const p of procs) {
    total.leaseLostStops += p.rejections.leaseLostStops;
    total.rejectedCheckpointWrites += p.rejections.rejectedCheckpointWrites;
    total.leaseLostErrorLines += p.rejections.leaseLostErrorLines;
  }
  return total;
}
