// LangGraph's own conformance suite for checkpoint savers, run against a FencedPostgresSaver
// whose fence is a real, currently claimed job: once as it stores values by default, once sealing
// them at rest (SealingSerializer). Its 1.1.1 CLI is broken, so validate() is called from this
// vitest file (it registers describe/it through vitest `globals: true`).
import { randomBytes } from 'node:crypto';
import { validate } from '@langchain/langgraph-checkpoint-validation';
import { expect } from 'vitest';
import { type TestDb, testDb } from '../../../test/support/db';
import { AesGcmPayloadCodec, FencedPostgresSaver, type PayloadCodec } from '../src/index';

function conformance(name: string, schemaName: string, codec?: PayloadCodec): void {
  let db: TestDb | undefined;
  const jobs = new Map<FencedPostgresSaver, { jobId: string; token: number }>();
  validate<FencedPostgresSaver>({
    checkpointerName: name,
    beforeAllTimeout: 60_000,
    async beforeAll() {
      db = await testDb(schemaName);
    },
    async afterAll() {
      await db?.close();
    },
    async createCheckpointer() {
      if (!db) throw new Error('beforeAll did not open the test database');
      const { ledger, schema } = db;
      const { job } = await ledger.admit({ graph: 'validate', input: {} });
      // A lease far longer than the suite, so every write in it is by the current holder.
      const claim = await ledger.claim(job.jobId, 'validator', 600_000);
      if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
      const saver = new FencedPostgresSaver(ledger, { jobId: job.jobId, fencingToken: claim.job.fencingToken }, { schema, codec });
      jobs.set(saver, { jobId: job.jobId, token: claim.job.fencingToken });
      return saver;
    },
    async destroyCheckpointer(saver) {
      if (!db) return;
      if (codec) {
        // Sealed for real: no stored value of the section is in LangGraph's plain form.
        const { rows } = await db.ledger.pool.query('SELECT type FROM checkpoint_blobs WHERE blob IS NOT NULL UNION ALL SELECT type FROM checkpoint_writes');
        expect(rows.every((r) => String(r.type).startsWith('sealed:'))).toBe(true);
      }
      // The suite reuses thread ids across its sections: start each from empty tables.
      await db.ledger.pool.query('TRUNCATE checkpoints, checkpoint_blobs, checkpoint_writes');
      const fence = jobs.get(saver);
      jobs.delete(saver);
      if (!fence) return;
      // The fence held the whole time: no write of the suite was refused, and the job is still ours.
      expect(saver.rejectedWrites).toBe(0);
      await db.ledger.complete(fence.jobId, fence.token, { validated: true });
    },
  });
}

conformance('FencedPostgresSaver', 'saver_validation');
conformance('FencedPostgresSaver sealing values', 'saver_validation_sealed', AesGcmPayloadCodec.fromSpec(`k1:${randomBytes(32).toString('base64')}`));
