import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Managed, Supervisor, tailLog } from './supervisor';

export interface LocalStackOptions {
  root: string;
  logDir: string;
  /** Prints one line to the user. */
  say: (line: string) => void;
  /** A process the stack cannot do without died: the caller stops everything. */
  onFatal: (message: string) => void;
  /** How long a draining worker may take (DRAIN_DEADLINE_MS); the supervisor waits 5 s more. */
  drainDeadlineMs: number;
}

/** A worker that ran at least this long is restarted when it dies; a quicker death is a configuration error. */
const RESTART_AFTER_MS = 10_000;

// Resolved as packages, so the same code runs the repository's sources (under tsx) and the
// installed, built packages (plain node). embedded-host sits beside this module.
const ENTRIES = {
  postgres: path.join(import.meta.dirname, `embedded-host${path.extname(import.meta.filename)}`),
  producer: fileURLToPath(import.meta.resolve('@runledger/producer/main')),
  worker: fileURLToPath(import.meta.resolve('@runledger/worker/main')),
} as const;

/**
 * The processes of `npm start`: an embedded PostgreSQL (optional), the producer and N workers.
 * Restarts a worker that dies (a `kill -9` in the tour); any other death is fatal.
 */
export class LocalStack {
  private readonly sup: Supervisor;
  private readonly workers: string[] = [];

  constructor(private readonly o: LocalStackOptions) {
    this.sup = new Supervisor({ root: o.root, logDir: o.logDir, onUnexpectedExit: (m, code, signal) => this.died(m, code, signal) });
  }

  private relativeLog(m: Managed): string {
    const rel = path.relative(process.cwd(), m.logFile);
    return rel.startsWith('..') ? m.logFile : rel;
  }

  private died(m: Managed, code: number | null, signal: NodeJS.Signals | null): void {
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (m.spec.name.startsWith('worker-') && Date.now() - m.startedAt >= RESTART_AFTER_MS) {
      const next = this.sup.start(m.spec);
      this.o.say(
        `${m.spec.name} (pid ${m.pid}) exited with ${how}; started it again (pid ${next.pid}). Its jobs resume on a live worker once their lease expires.`,
      );
      return;
    }
    const tail = tailLog(m.logFile).map((l) => `    ${l}`);
    this.o.onFatal([`${m.spec.name} (pid ${m.pid}) exited with ${how}; last lines of ${this.relativeLog(m)}:`, ...tail].join('\n'));
  }

  /** Starts the embedded PostgreSQL with its data in `dir`; resolves with its URL (and where the data really is) once it accepts connections. */
  startDatabase(dir: string, env: NodeJS.ProcessEnv): Promise<{ url: string; port: number; dataDir: string }> {
    const m = this.sup.start({ name: 'postgres', entry: ENTRIES.postgres, args: [dir], env });
    return new Promise((resolve, reject) => {
      m.child.on('message', (msg: { type?: string; url?: string; port?: number; dataDir?: string; message?: string }) => {
        if (msg.type === 'ready' && msg.url && msg.port) resolve({ url: msg.url, port: msg.port, dataDir: msg.dataDir ?? dir });
        if (msg.type === 'error') reject(new Error(`${msg.message}; see ${this.relativeLog(m)}`));
      });
      void m.exited.then(() => reject(new Error(`embedded PostgreSQL exited during start-up; see ${this.relativeLog(m)}`)));
    });
  }

  /** Starts the producer; resolves its pid. */
  startProducer(env: NodeJS.ProcessEnv): number {
    return this.sup.start({ name: 'producer', entry: ENTRIES.producer, env }).pid;
  }

  /** Starts one worker per environment, named worker-1 … worker-N; returns their pids. */
  startWorkers(envs: NodeJS.ProcessEnv[]): number[] {
    return envs.map((env, i) => {
      const name = `worker-${i + 1}`;
      this.workers.push(name);
      return this.sup.start({ name, entry: ENTRIES.worker, env }).pid;
    });
  }

  /** Pids of the workers running now (they change when one is restarted). */
  workerPids(): number[] {
    return this.workers.map((w) => this.sup.get(w)?.pid).filter((p): p is number => p !== undefined);
  }

  /** Every child pid (for tests and the final check). */
  pids(): number[] {
    return this.sup.pids();
  }

  /**
   * The orderly stop: SIGTERM to the workers (they drain: running jobs stop at a step boundary
   * and are handed back) and to the producer, then the database once they are gone.
   */
  async stop(): Promise<void> {
    this.sup.close();
    await Promise.all([...this.workers.map((w) => this.sup.stop(w, this.o.drainDeadlineMs + 5_000)), this.sup.stop('producer', 12_000)]);
    await this.sup.stop('postgres', 15_000);
  }

  /**
   * Starts the workers and the producer again with the same settings (new graph code): the
   * workers drain first (running jobs stop at a step boundary and are handed back, then the new
   * workers take them). Resolves with the new pids.
   */
  async restartServers(): Promise<{ producer: number; workers: number[] }> {
    const names = [...this.workers, 'producer'];
    const specs = names.map((n) => this.sup.get(n)?.spec).filter((s) => s !== undefined);
    await Promise.all(names.map((n) => this.sup.stop(n, n === 'producer' ? 12_000 : this.o.drainDeadlineMs + 5_000)));
    const started = specs.map((spec) => this.sup.start(spec));
    return {
      producer: started.find((m) => m.spec.name === 'producer')?.pid ?? -1,
      workers: started.filter((m) => m.spec.name !== 'producer').map((m) => m.pid),
    };
  }

  /** Kills every process at once (second Ctrl-C). */
  kill(): void {
    this.sup.killAll();
  }
}
