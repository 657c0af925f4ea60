import { migrate, sessionUrl } from '@runledger/ledger/core';
import { CliError } from '../cli-error';
import type { CliContext } from '../context';

/** `runledger migrate`: applies the ledger and checkpoint migrations to DATABASE_URL / DB_SCHEMA (safe to repeat). */
export async function migrateSchema(ctx: CliContext): Promise<void> {
  const { schema, pooler, directUrl } = ctx.env;
  let connectionString: string;
  try {
    connectionString = sessionUrl({ DATABASE_URL: ctx.databaseUrl, RUNLEDGER_PG_POOLER: pooler, RUNLEDGER_PG_DIRECT_URL: directUrl }, '`runledger migrate`');
  } catch (err) {
    throw new CliError((err as Error).message, 2);
  }
  const applied = await migrate({ connectionString, schema, log: (line) => ctx.print(`  ${line}`) });
  ctx.print(`schema ${schema} is up to date (${applied.length} migration(s) applied now)`);
}
