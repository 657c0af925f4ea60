import { readdirSync, readFileSync } from 'node:fs';

const dir = new URL('./sql/', import.meta.url);

/** Every statement in `sql/`, keyed by file name without `.sql`. Loaded once at import. */
export const SQL: Readonly<Record<string, string>> = Object.fromEntries(
  readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((f) => [f.slice(0, -4), readFileSync(new URL(f, dir), 'utf8')]),
);

export function sql(name: string): string {
  const text = SQL[name];
  if (text === undefined) throw new Error(`No SQL statement named ${name} in packages/ledger/src/sql`);
  return text;
}
