import { migrate } from '@runledger/ledger/core';
import type { CliContext } from '../context';

/** `runledger migrate`: applies the ledger and checkpoint migrations to DATABASE_URL / DB_SCHEMA (safe to repeat). */
export async function migrateSchema(ctx: CliContext): Promise<void> {
  const { schema } = ctx.env;
  const applied = await migrate({ connectionString: ctx.databaseUrl, schema, log: (line) => ctx.print(`  ${line}`) });
  ctx.print(`schema ${schema} is up to date (${applied.length} migration(s) applied now)`);
}
