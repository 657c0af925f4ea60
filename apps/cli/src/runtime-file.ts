import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where `npm start` / `runledger dev` keep `.runledger/` by default: the repository's root when
 * the CLI runs in the repository, from its sources or from its build beside them (so
 * `npx runledger` finds the stack from any of its directories), the working directory (the
 * user's project) when it runs installed.
 */
export function projectRoot(): string {
  const inRepository = import.meta.filename.endsWith('.ts') || existsSync(path.resolve(import.meta.dirname, '../src/main.ts'));
  return inRepository ? path.resolve(import.meta.dirname, '../../..') : process.cwd();
}

/** Where `npm start` keeps its data: RUNLEDGER_HOME, default `.runledger` in the project root. */
export function runledgerHome(env: NodeJS.ProcessEnv): string {
  return env.RUNLEDGER_HOME ? path.resolve(env.RUNLEDGER_HOME) : path.join(projectRoot(), '.runledger');
}

/** What a running `npm start` tells the CLI, so `npx runledger …` finds its embedded database. */
export interface RuntimeInfo {
  pid: number;
  databaseUrl: string;
  schema: string;
  queueBackend: 'redis' | 'postgres';
  redisUrl?: string;
  queuePrefix: string;
  apiUrl: string;
}

const file = (home: string) => path.join(home, 'runtime.json');

/** Records the running stack (mode 600: the URL holds a password). */
export function writeRuntimeInfo(home: string, info: RuntimeInfo): void {
  writeFileSync(file(home), `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
}

export function removeRuntimeInfo(home: string): void {
  rmSync(file(home), { force: true });
}

/** The stack `npm start` runs from `home`, or undefined when none runs (stale files are ignored). */
export function readRuntimeInfo(home: string): RuntimeInfo | undefined {
  let info: RuntimeInfo;
  try {
    info = JSON.parse(readFileSync(file(home), 'utf8')) as RuntimeInfo;
  } catch {
    return undefined;
  }
  try {
    process.kill(info.pid, 0);
    return info;
  } catch {
    return undefined;
  }
}
