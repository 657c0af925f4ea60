// The first start of the embedded PostgreSQL, as `npm start` does it (a fresh data directory,
// then the migrations, the checkpointer's tables included), leaves no ERROR or FATAL line in the
// server's log, which a new user reads in .runledger/logs/postgres.log. A second migrate on the
// same cluster (the next start) leaves none either.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type EmbeddedDatabase, migrate, startEmbeddedPostgres } from '../src/index';

const dir = mkdtempSync(path.join(os.tmpdir(), 'runledger-first-start-'));
let db: EmbeddedDatabase | undefined;
afterAll(async () => {
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (db && db.dataDir !== path.join(dir, 'pg')) rmSync(db.dataDir, { recursive: true, force: true });
});

describe('first start of the embedded PostgreSQL', () => {
  it('logs no ERROR while it initialises, starts and is migrated, twice', async () => {
    const log: string[] = [];
    db = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), log: (line) => log.push(line) });
    await migrate({ connectionString: db.url, schema: 'public' });
    await migrate({ connectionString: db.url, schema: 'public' });
    // The server's own lines did reach the log, so an ERROR would have too.
    expect(log.join('\n')).toMatch(/ready to accept connections/);
    expect(log.filter((line) => /\b(ERROR|FATAL|PANIC):/.test(line))).toEqual([]);
  }, 180_000);
});
