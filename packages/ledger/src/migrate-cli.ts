// `npm run migrate`: applies the ledger and checkpoint migrations to DATABASE_URL / DB_SCHEMA.
import { migrate } from './migrate';

const url = process.env.DATABASE_URL;
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
