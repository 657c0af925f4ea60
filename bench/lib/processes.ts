// Real processes for the benchmarks: Runledger workers and producers started the way
// `npm run worker` / `npm run producer` start them (node --import tsx <entry>, as
// test/support/stack.ts does, whose stackEnv gives their environment), and the bench's own
// helper scripts under bench/procs/.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { QueueConfig } from '../../packages/queue/src/index';
import { type Proc, queueConfigFor, spawnProcess, stackEnv } from '../../test/support/stack';

const root = path.resolve(import.meta.dirname, '../..');

export type { Proc };

/** Set by run.ts for `--profile`: every spawned process writes a V8 CPU profile there when it exits. */
export const profiling = { dir: undefined as string | undefined };

const profileFlags = (): string[] => (profiling.dir ? ['--cpu-prof', `--cpu-prof-dir=${profiling.dir}`] : []);

/** Starts `node --import tsx <entry>` (a path from the repository root), capturing its output; profiled under `--profile`. */
export function spawnScript(entry: string, env: NodeJS.ProcessEnv): Proc {
  return spawnProcess(entry, env, profileFlags());
}

/** Queue settings for one benchmark: its own Redis prefix, or BullMQ's PostgreSQL backend in the schema. */
export function benchQueueConfig(backend: 'redis' | 'postgres', databaseUrl: string, schema: string, redisUrl: string | null): QueueConfig {
  return queueConfigFor(backend, databaseUrl, schema, redisUrl, 'bench');
}

/** Resolves when `proc`'s output matches `pattern`; rejects when it exits first or `timeoutMs` passes. */
export async function waitForOutput(proc: Proc, pattern: RegExp, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => {
    exited = true;
  });
  while (!pattern.test(proc.output())) {
    if (exited || Date.now() > end) throw new Error(`${what}: ${exited ? 'exited' : 'timed out'} before ready; output:\n${proc.output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Starts a worker process (`apps/worker/src/main.ts`) and waits for its "worker started" line. */
export async function startWorker(q: QueueConfig, databaseUrl: string, schema: string, workerId: string, extra: Record<string, string> = {}): Promise<Proc> {
  const env = stackEnv(q, databaseUrl, schema, { METRICS_PORT: '0', RUNLEDGER_WORKER_ID: workerId, ...extra });
  const proc = spawnScript('apps/worker/src/main.ts', env);
  // Generous: on a busy machine compiling the worker's TypeScript alone can take a minute.
  // One that never gets ready is killed, not left consuming a dropped schema.
  await waitForOutput(proc, /"msg":"worker started"/, `worker ${workerId}`, 180_000).catch((err) => {
    proc.kill('SIGKILL');
    throw err;
  });
  return proc;
}

/** Signals a process and waits for it to exit; SIGKILLs it when it takes longer than `timeoutMs`. */
export async function stop(proc: Proc, signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 25_000): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.kill(signal);
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  await proc.exited;
  clearTimeout(timer);
}

/** A bench helper script (bench/procs/*.ts) driven line by line: `ask` writes a command, reads one JSON line back. */
export interface Helper {
  child: ChildProcess;
  ask<T>(command: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export function startHelper(script: string, env: Record<string, string>): Helper {
  const child = spawn(process.execPath, [...profileFlags(), '--conditions=@runledger/source', '--import', 'tsx', path.join(root, 'bench/procs', script)], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let buffered = '';
  let errors = '';
  const waiting: Array<(line: string) => void> = [];
  child.stdout?.on('data', (d: Buffer) => {
    buffered += d.toString();
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      waiting.shift()?.(line);
    }
  });
  child.stderr?.on('data', (d: Buffer) => {
    errors = (errors + d.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    child,
    ask<T>(command: string, timeoutMs = 300_000) {
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${script}: no answer to "${command}" in ${timeoutMs} ms; stderr:\n${errors}`)), timeoutMs);
        void exited.then(() => reject(new Error(`${script} exited; stderr:\n${errors}`)));
        waiting.push((line) => {
          clearTimeout(timer);
          const answer = JSON.parse(line) as T & { error?: string };
          if (answer.error) reject(new Error(`${script}: ${answer.error}`));
          else resolve(answer);
        });
        child.stdin?.write(`${command}\n`);
      });
    },
    async close() {
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
