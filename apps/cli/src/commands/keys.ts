import { KeyRotation, parseEncryptionKeys, type ResealTick } from '@runledger/ledger/core';
import { CliError } from '../cli-error';
import type { CliContext } from '../context';
import { ago, table } from '../format';

/** The rotation over the CLI's ledger, and the configured key ids (current first); CliError when no key is set. */
function rotation(ctx: CliContext): { rotation: KeyRotation; kids: string[] } {
  const spec = ctx.env.encryptionKey;
  if (!spec) throw new CliError('RUNLEDGER_ENCRYPTION_KEY is not set: list the new key first, then the old ones (kid:base64key,kid:base64key).', 2);
  const ledger = ctx.ledger; // parses the keys, with a CliError naming a malformed one
  return { rotation: new KeyRotation(ledger.pool, ledger.payloadCodec), kids: parseEncryptionKeys(spec).map((k) => k.kid) };
}

/** `runledger keys status`: the values per table not sealed with the current key, and where the last re-seal stands. */
export async function keysStatus(ctx: CliContext, json: boolean): Promise<void> {
  const { rotation: r, kids } = rotation(ctx);
  const [tables, positions] = [await r.status(), await r.positions()];
  const remaining = tables.reduce((n, t) => n + Object.values(t.stale).reduce((a, b) => a + b, 0), 0);
  if (json) return ctx.print(JSON.stringify({ currentKid: kids[0], kids, remaining, tables, positions }, null, 2));
  const at = new Map(positions.map((p) => [p.table, p]));
  const rows = tables.map((t) => {
    const p = at.get(t.table);
    const stale = Object.entries(t.stale).map(([kid, n]) => `${kid}: ${n}`);
    const run = !p
      ? 'never'
      : p.finishedAt
        ? `finished ${ago(p.finishedAt)} (to ${p.targetKid})`
        : `stopped at ${JSON.stringify(p.position)} (to ${p.targetKid})`;
    return [t.table, String(t.rows), stale.join(', ') || '-', p ? `${p.resealed}` : '-', run];
  });
  ctx.print(
    `current key: ${kids[0]} (configured: ${kids.join(', ')})`,
    '',
    table(['table', 'rows', `not sealed with ${kids[0]}`, 're-sealed', 'last re-seal'], rows),
    '',
  );
  ctx.print(
    remaining === 0
      ? `every sealed value uses ${kids[0]}.`
      : `${remaining} value(s) still sealed with another key: run \`runledger keys rotate\` (safe while workers run).`,
  );
}

/** `runledger keys rotate [--to KID] [--batch N]`: re-seals every value sealed with an older key with the current one, with a progress bar. */
export async function keysRotate(ctx: CliContext, options: { to?: string; batch: number }): Promise<number> {
  const { rotation: r, kids } = rotation(ctx);
  const current = kids[0] as string;
  if (options.to !== undefined && !kids.includes(options.to)) {
    throw new CliError(`--to ${options.to}: no key with that id in RUNLEDGER_ENCRYPTION_KEY (configured: ${kids.join(', ')}).`, 2);
  }
  if (options.to !== undefined && options.to !== current) {
    throw new CliError(
      `--to ${options.to}: the current key is ${current}. Put ${options.to} first in RUNLEDGER_ENCRYPTION_KEY, deploy that to every producer and worker, then re-seal.`,
      2,
    );
  }
  ctx.print(`re-sealing every value not sealed with ${current} (batches of ${options.batch}; safe to stop: a new run resumes)`);
  const tty = ctx.out.isTTY === true;

  const line = (t: ResealTick) => {
    const width = 24;
    const filled = t.total === 0 ? width : Math.min(width, Math.round((t.walked / t.total) * width));
    return `  ${t.table.padEnd(18)} [${ctx.paint.green('■'.repeat(filled))}${'□'.repeat(width - filled)}] ${t.walked}/${t.total} rows · ${t.resealed} re-sealed`;
  };
  let last: ResealTick | undefined;
  const finishLine = () => {
    if (last) ctx.out.write(tty ? `\r\x1b[2K${line(last)}\n` : `${line(last)}\n`);
  };
  const report = await r.run({
    batchSize: options.batch,
    onBatch: (t) => {
      if (last && last.table !== t.table) finishLine();
      last = t;
      if (tty) ctx.out.write(`\r\x1b[2K${line(t)}`);
    },
  });
  finishLine();

  ctx.print(
    `done: ${report.walked} rows walked, ${report.resealed} value(s) re-sealed with ${current}, ${report.conflicts} changed by a writer meanwhile (kept as written), ${report.unreadable} unreadable`,
  );
  if (report.unreadable === 0) return 0;
  ctx.print(...report.errors.map((e) => `  ${ctx.paint.red('✗')} ${e}`));
  ctx.print('Unreadable values were left as they are: add the key they name (after the current one), or restore them, and run again.');
  return 1;
}
