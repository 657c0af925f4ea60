// `npm run migrate`: applies the ledger and checkpoint migrations to DATABASE_URL / DB_SCHEMA.
import { PG_POOLERS, type PgPooler, sessionUrl } from './db';
import { migrate } from './migrate';

const pooler = process.env.RUNLEDGER_PG_POOLER || undefined;
if (pooler !== undefined && !PG_POOLERS.includes(pooler as PgPooler)) {
  console.error(`runledger migrate: RUNLEDGER_PG_POOLER ${JSON.stringify(pooler)} is not known: it must be "transaction", or unset.`);
  process.exit(2);
}
const url = process.env.DATABASE_URL && sessionOrExit(process.env.DATABASE_URL);
if (!url) {
  console.error('runledger migrate: DATABASE_URL is not set (e.g. postgres://user@127.0.0.1:5432/db).');
  process.exit(2);
}
const schema = process.env.DB_SCHEMA ?? 'public';
try {
  const applied = await migrate({ connectionString: url, schema, log: (l) => console.log(`runledger migrate: ${l}`) });
  console.log(`runledger migrate: schema ${schema} is up to date (${applied.length} migration(s) applied now).`);
} catch (err) {
  console.error(`runledger migrate: ${(err as Error).message}`);
  process.exit(1);
}

/** RUNLEDGER_PG_DIRECT_URL behind a pooler (migrations hold a session advisory lock), else DATABASE_URL. */
function sessionOrExit(databaseUrl: string): string {
  try {
    return sessionUrl(
      {
        DATABASE_URL: databaseUrl,
        RUNLEDGER_PG_POOLER: pooler as PgPooler | undefined,
        RUNLEDGER_PG_DIRECT_URL: process.env.RUNLEDGER_PG_DIRECT_URL || undefined,
      },
      'migrate',
    );
  } catch (err) {
    console.error(`runledger migrate: ${(err as Error).message}`);
    process.exit(2);
  }
}
