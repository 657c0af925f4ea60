// The dashboard's Upgrade action in a real headless Chromium, on an in-process producer and real
// in-process workers of two versions (RUNLEDGER_BUILD_ID v1 and v2 of the built-in graphs): a job
// waiting for a version nobody serves says so and moves to v2 from its page; a parked v1 approval
// is refused with a clear message when v2 cannot resume its checkpoints, and moves with replay.
// Both moves are the ledger's upgrade (the /v1 action's), recorded as `upgraded` in the timeline.
// Screenshots go to test-artifacts/. Skipped without Chromium.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunledgerWorker } from '../../apps/worker/src/index';
import { loadGraphs } from '../../packages/runtime/src/index';
import { hasChromium, shot } from '../support/browser';
import { type InProcessStack, startInProcessStack } from '../support/in-process-stack';
import { submit, waitForStatus } from '../support/stack';
import '../support/provided';

describe.skipIf(!hasChromium)('the Upgrade action on a job page in headless Chromium', () => {
  let stack: InProcessStack;
  let v2: RunledgerWorker;

  /** A worker serving the built-in graphs at `version`, started. */
  const workerAt = async (version: string) => stack.startWorker(`upgrade-${version}`, await loadGraphs({ buildId: version }));
  const upgradeForm = () => stack.page.locator('form[data-action="upgrade"]');
  const timelineTypes = () => stack.page.locator('table.timeline tbody tr td:nth-child(2)').allTextContents();

  beforeAll(async () => {
    stack = await startInProcessStack('browser_upgrade', { graphs: await loadGraphs({ buildId: 'v2' }) });
  });
  afterAll(async () => {
    await v2?.close();
    await stack?.close();
  });

  it('a parked v1 approval: refused without replay (nothing changes), moved with replay, and recorded in the timeline', async () => {
    const { db, q, page, base, problems } = stack;
    const v1 = await workerAt('v1');
    const { jobId } = await submit(db.ledger, q, { graph: 'approval', graphVersion: 'v1', input: { request: 'a new roof' } });
    expect((await waitForStatus(db.ledger, jobId, ['interrupted', 'failed'])).status).toBe('interrupted');
    await v1.close();
    // v2 declares nothing it can resume: the v1 checkpoints are incompatible with it.
    v2 = await workerAt('v2');

    await page.goto(`${base}/admin/jobs/${jobId}`);
    expect(await page.locator('dl.summary').textContent()).toContain('no live worker serves approval@v1');
    const form = upgradeForm();
    await form.locator('input[name="to"]').fill('v2');
    await form.locator('input[name="confirm"]').check();
    await shot(page, 'dashboard-job-upgrade-form');
    await form.locator('button[type="submit"]').click();
    const refusal = page.locator('p.error[role="alert"]');
    expect(await page.locator('h1').textContent()).toBe('Could not upgrade');
    expect(await refusal.textContent()).toBe(
      `Job ${jobId} stays on approval@v1: its checkpoints were written by a version the new one does not declare it can resume; tick “Replay” to run it again from its stored input.`,
    );
    await shot(page, 'dashboard-job-upgrade-refused');
    // The refusal page is a 409, which Chromium logs; nothing else went wrong.
    expect(problems.splice(0)).toEqual(['Failed to load resource: the server responded with a status of 409 (Conflict)']);
    const still = await db.ledger.get(jobId);
    expect([still.status, still.graphVersion]).toEqual(['interrupted', 'v1']);
    expect((await db.ledger.events(jobId)).some((e) => e.type === 'upgraded')).toBe(false);

    await page.locator('a', { hasText: 'Back' }).click();
    await upgradeForm().locator('input[name="to"]').fill('v2');
    await upgradeForm().locator('input[name="replay"]').check();
    await upgradeForm().locator('input[name="note"]').fill('roof release 2');
    await upgradeForm().locator('input[name="confirm"]').check();
    await upgradeForm().locator('button[type="submit"]').click();
    await page.waitForURL(/done=upgrade/);
    expect(await page.locator('p.notice').textContent()).toMatch(/^Moved to the new version\. /);
    expect(await timelineTypes()).toContain('upgraded');
    const upgraded = (await db.ledger.events(jobId)).find((e) => e.type === 'upgraded');
    expect(upgraded?.detail).toEqual({ from: 'v1', to: 'v2', replay: true, note: 'roof release 2' });

    // Replayed from its input on v2: it asks again, now as a v2 job.
    await waitForStatus(db.ledger, jobId, ['interrupted'], 30_000).then(async () =>
      expect((await db.ledger.events(jobId)).filter((e) => e.type === 'interrupted')).toHaveLength(2),
    );
    expect((await db.ledger.get(jobId)).graphVersion).toBe('v2');
    await page.reload();
    expect(await page.locator('dl.summary').textContent()).toContain('v2');
    expect(problems).toEqual([]);
  });

  it('a job waiting for a version no live worker serves says so, and moves to v2 from its page', async () => {
    const { db, q, page, base, problems } = stack;
    const { jobId } = await submit(db.ledger, q, { graph: 'echo', graphVersion: 'v1', input: { steps: 1 } });
    await page.goto(`${base}/admin/jobs/${jobId}`);
    expect(await page.locator('dl.summary').textContent()).toContain('no live worker serves echo@v1: the job waits for one');
    await upgradeForm().locator('input[name="to"]').fill('v2');
    await upgradeForm().locator('input[name="confirm"]').check();
    await upgradeForm().locator('button[type="submit"]').click();
    await page.waitForURL(/done=upgrade/);
    const done = await waitForStatus(db.ledger, jobId, ['completed', 'failed']);
    expect([done.status, done.graphVersion]).toEqual(['completed', 'v2']);
    await page.reload();
    expect(await timelineTypes()).toEqual(expect.arrayContaining(['upgraded', 'claimed', 'completed']));
    expect(await upgradeForm().count()).toBe(0);
    await shot(page, 'dashboard-job-upgraded');
    expect(problems).toEqual([]);
  });

  it('refuses the form without its confirmation box, and keeps the job where it was', async () => {
    const { db, q, page, base } = stack;
    const { jobId } = await submit(db.ledger, q, { graph: 'echo', graphVersion: 'v0', input: {} });
    await page.goto(`${base}/admin/jobs/${jobId}`);
    await upgradeForm().locator('input[name="to"]').fill('v2');
    // The browser would not submit without the box; a hand-made request is refused by the server too.
    await upgradeForm()
      .locator('input[name="confirm"]')
      .evaluate((box) => box.removeAttribute('required'));
    await upgradeForm().locator('button[type="submit"]').click();
    expect(await page.locator('p.error[role="alert"]').textContent()).toBe(`Tick the confirmation box to upgrade job ${jobId}.`);
    expect((await db.ledger.get(jobId)).graphVersion).toBe('v0');
  });
});
