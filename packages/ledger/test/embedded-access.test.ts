import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closedDirectoryOnPath } from '../src/embedded-root';

describe('closedDirectoryOnPath (why embedded PostgreSQL cannot start as root)', () => {
  const top = mkdtempSync(path.join(os.tmpdir(), 'rl-access-'));
  const inner = path.join(top, 'a', 'b');
  mkdirSync(inner, { recursive: true });
  afterAll(() => rmSync(top, { recursive: true, force: true }));
  const stranger = 54_321;

  it('names the first directory another user may not enter', () => {
    chmodSync(top, 0o700);
    expect(closedDirectoryOnPath(inner, stranger)).toBe(top);
    // Not yet created parts of the path are skipped: the check starts where the path exists.
    expect(closedDirectoryOnPath(path.join(inner, 'pgdata', 'new'), stranger)).toBe(top);
  });

  it('passes when every directory lets others through, and uses the owner bit for the owner', () => {
    chmodSync(top, 0o711);
    expect(closedDirectoryOnPath(inner, stranger)).toBeUndefined();
    chmodSync(top, 0o700);
    expect(closedDirectoryOnPath(inner, statSync(top).uid)).toBeUndefined();
    chmodSync(top, 0o600);
    expect(closedDirectoryOnPath(inner, statSync(top).uid)).toBe(top);
    chmodSync(top, 0o700);
  });
});
