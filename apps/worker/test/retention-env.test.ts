import { describe, expect, it } from 'vitest';
import { parseWorkerEnv } from '../src/config';

// RETENTION_JOBS: delete (the default) or keep; anything else stops the worker at start-up with a line naming it.

const DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

describe('RETENTION_JOBS', () => {
  it('defaults to delete and accepts keep', () => {
    const byDefault = parseWorkerEnv({ DATABASE_URL, RETENTION_DAYS: '30' });
    expect(byDefault.ok && byDefault.env.RETENTION_JOBS).toBe('delete');
    const kept = parseWorkerEnv({ DATABASE_URL, RETENTION_JOBS: 'keep' });
    expect(kept.ok && kept.env.RETENTION_JOBS).toBe('keep');
  });

  it('refuses any other value with a message naming the variable and the choices', () => {
    expect(parseWorkerEnv({ DATABASE_URL, RETENTION_JOBS: 'drop' })).toEqual({ ok: false, message: 'RETENTION_JOBS: must be delete or keep (got "drop")' });
  });
});
