import { AesGcmPayloadCodec, createPool, Ledger, parseEncryptionKeys } from '@runledger/ledger/core';
import type { DeliveryData } from '@runledger/queue';
import type { Queue } from 'bullmq';
import type pg from 'pg';
import type { CliEnv } from './cli-env';
import { CliError } from './cli-error';
import { createPaint, type Paint, wantsColor } from './format';

/**
 * What a command works with: the ledger and the queue, opened on first use and closed by
 * `close()`, and where to print. Built by main.ts from the environment.
 */
export class CliContext {
  private pool: pg.Pool | undefined;
  private ledgerInstance: Ledger | undefined;
  private queueInstance: Queue<DeliveryData> | undefined;
  readonly paint: Paint;

  constructor(
    readonly env: CliEnv,
    readonly out: NodeJS.WriteStream = process.stdout,
  ) {
    this.paint = createPaint(wantsColor(out));
  }

  /** Prints lines to stdout. */
  print(...lines: string[]): void {
    this.out.write(`${lines.join('\n')}\n`);
  }

  /** The database URL, or a CliError saying how to name one. */
  get databaseUrl(): string {
    if (!this.env.databaseUrl) {
      throw new CliError('DATABASE_URL is not set and no `npm start` is running here: set DATABASE_URL=postgres://user:pass@host:5432/db, or run `npm start`.');
    }
    return this.env.databaseUrl;
  }

  get ledger(): Ledger {
    if (!this.ledgerInstance) {
      let crypto: AesGcmPayloadCodec | undefined;
      try {
        crypto = this.env.encryptionKey ? new AesGcmPayloadCodec(parseEncryptionKeys(this.env.encryptionKey)) : undefined;
      } catch (err) {
        throw new CliError(`RUNLEDGER_ENCRYPTION_KEY: ${(err as Error).message}`, 2);
      }
      this.pool = createPool({ connectionString: this.databaseUrl, schema: this.env.schema, max: 4, pooler: this.env.pooler, onError: () => {} });
      this.ledgerInstance = new Ledger(this.pool, { crypto });
    }
    return this.ledgerInstance;
  }

  /** The BullMQ queue (imported on first use: most commands never touch it). */
  async queue(): Promise<Queue<DeliveryData>> {
    if (!this.queueInstance) {
      const { openQueue } = await import('@runledger/queue');
      this.queueInstance = openQueue({ ...this.env.queue, databaseUrl: this.env.queue.databaseUrl ?? this.databaseUrl });
      // Connection errors surface as rejected calls; the emitter's copies would only be noise.
      this.queueInstance.on('error', () => {});
    }
    return this.queueInstance;
  }

  /** Closes whatever was opened. */
  async close(): Promise<void> {
    await Promise.allSettled([this.queueInstance?.close(), this.pool?.end()]);
  }
}
