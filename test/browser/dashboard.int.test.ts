// The dashboard in a real headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core): open the list served by an in-process producer on port 0, find a
// manual_reconcile job, open its page, try to replay without confirming, confirm, and see the
// status change. Screenshots go to test-artifacts/ (gitignored). Skipped without Chromium.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, shot } from '../support/browser';
import { type InProcessStack, startInProcessStack } from '../support/in-process-stack';
import '../support/provided';

describe.skipIf(!hasChromium)('dashboard in headless Chromium', () => {
  let stack: InProcessStack;
  let jobId: string;

  beforeAll(async () => {
    stack = await startInProcessStack('browser', { viewport: { width: 1280, height: 900 } });
    const { db } = stack;
    // Some history for the list and the charts, then a job that needs a person.
    for (let i = 0; i < 5; i++) await db.ledger.admit({ graph: 'echo', input: { steps: i + 1 } });
    const { job } = await db.ledger.admit({ graph: 'vacation', input: {} });
    jobId = job.jobId;
    const claim = await db.ledger.claim(jobId, 'browser-test-worker');
    if (!claim.ok) throw new Error(`claim refused: ${claim.reason}`);
    await db.ledger.recordEffectIntent(jobId, claim.job.fencingToken, 'book:hotel', 'book_hotel', `${jobId}:book:hotel`);
    await db.ledger.requireManual(jobId, claim.job.fencingToken, 'effect_in_doubt', { effect: 'book_hotel' });
  });
  afterAll(() => stack?.close());

  it('lists jobs with counts and drawn charts', async () => {
    const { page, base } = stack;
    await page.goto(`${base}/admin`);
    await expect.poll(() => page.locator('canvas[data-drawn="true"]').count(), { timeout: 10_000 }).toBe(2);
    expect(await page.locator('.count', { hasText: 'manual_reconcile' }).locator('.n').textContent()).toBe('1');
    await shot(page, 'dashboard-list');
  });

  it('filters to manual_reconcile, opens the job and shows the effect in doubt', async () => {
    const { page, base } = stack;
    await page.selectOption('select[name="status"]', 'manual_reconcile');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/status=manual_reconcile/);
    const row = page.locator(`tr[data-job-id="${jobId}"]`);
    expect(await row.count()).toBe(1);
    await row.locator('a').first().click();
    await page.waitForURL(`${base}/admin/jobs/${jobId}`);
    expect(await page.locator('#job-id').textContent()).toBe(jobId);
    expect(await page.locator('.doubt').textContent()).toContain('book_hotel');
    expect(await page.locator('.summary .badge').first().textContent()).toBe('manual_reconcile');
    await shot(page, 'dashboard-job-manual');
  });

  it('will not replay until the confirmation is ticked, then replays and shows the new status', async () => {
    const { db, page, base, problems } = stack;
    const form = page.locator('form[data-action="replay"]');
    await form.locator('input[name="note"]').fill('checked the hotel provider: no booking');
    await form.locator('button[type="submit"]').click();
    // The required checkbox stops the browser from submitting.
    await page.waitForTimeout(300);
    expect(page.url()).toBe(`${base}/admin/jobs/${jobId}`);
    expect((await db.ledger.get(jobId)).status).toBe('manual_reconcile');

    await form.locator('input[name="confirm"]').check();
    await form.locator('button[type="submit"]').click();
    await page.waitForURL(/done=replay/);
    expect(await page.locator('.notice').textContent()).toContain('Replay requested');
    expect(await page.locator('.summary .badge').first().textContent()).toBe('accepted');
    expect(await page.locator('table.timeline').textContent()).toContain('replay_requested');
    await shot(page, 'dashboard-job-replayed');
    expect((await db.ledger.get(jobId)).status).toBe('accepted');
    // No script errors and no Content-Security-Policy violations on any page.
    expect(problems).toEqual([]);
  });
});

describe.skipIf(!hasChromium)('signing in to the dashboard in headless Chromium', () => {
  const ADMIN_KEY = 'browser-admin-key-5b2e9c0d41f7';
  let stack: InProcessStack;

  beforeAll(async () => {
    stack = await startInProcessStack('browser_login', { security: { adminKey: ADMIN_KEY }, viewport: { width: 1280, height: 700 } });
  });
  afterAll(() => stack?.close());

  it("goes from / to a login page in the dashboard's look that names RUNLEDGER_ADMIN_KEY, then into the dashboard", async () => {
    const { page, base, problems } = stack;
    await page.goto(`${base}/`);
    await page.waitForURL(`${base}/admin/login`);
    expect(await page.locator('main').textContent()).toContain('RUNLEDGER_ADMIN_KEY');
    // The dashboard's stylesheet applied: its dark header bar and its boxed form.
    // (As strings: this project's TypeScript has no DOM types.)
    const background = (selector: string) => page.evaluate(`getComputedStyle(document.querySelector('${selector}')).backgroundColor`);
    expect(await background('header')).toBe('rgb(29, 36, 51)');
    expect(await background('form.action')).toBe('rgb(255, 255, 255)');
    await shot(page, 'dashboard-login');

    await page.fill('input[name="key"]', ADMIN_KEY);
    await page.click('button[type="submit"]');
    await page.waitForURL(`${base}/admin`);
    expect(await page.locator('h1').textContent()).toBe('Jobs');
    expect(problems).toEqual([]);
  });
});
