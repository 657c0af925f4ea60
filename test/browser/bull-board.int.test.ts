// Bull Board (/admin/queues) as an inspection view, in a real headless Chromium (Debian's
// /usr/bin/chromium, driven by playwright-core), on an in-process producer and worker: after
// vacation and approval jobs ran, the Completed tab lists each delivery under its graph's name
// with its outcome and a link to its ledger job, a redelivery says so, and the Active tab shows
// a running job's progress. Screenshots go to test-artifacts/ (docs/ with RUNLEDGER_UPDATE_DOCS=1). Skipped without Chromium.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { deliver } from '../../packages/queue/src/index';
import { hasChromium, shot } from '../support/browser';
import { type InProcessStack, startInProcessStack } from '../support/in-process-stack';
import { submit, waitForStatus } from '../support/stack';
import '../support/provided';

const backends = (['redis', 'postgres'] as const).filter((b) => b === 'postgres' || inject('redisUrl'));
/** The README's screenshots (docs/, with RUNLEDGER_UPDATE_DOCS=1) come from the first backend. */
const docsName = (backend: string, name: string) => (backend === backends[0] ? name : undefined);

describe.skipIf(!hasChromium).each(backends)('Bull Board in headless Chromium, %s backend', (backend) => {
  let stack: InProcessStack;
  const board = () => `${stack.base}/admin/queues/queue/runledger`;

  beforeAll(async () => {
    stack = await startInProcessStack(`bull_board_${backend}`, { backend, workerId: `board-${backend}` });
  });
  afterAll(() => stack?.close());

  it('lists finished deliveries by graph with their outcomes, a redelivery as such, each linked to its ledger job', async () => {
    const { db, q, queue, page } = stack;
    const vacation = await submit(db.ledger, q, { graph: 'vacation', input: {} });
    const approval = await submit(db.ledger, q, { graph: 'approval', input: { request: 'a new laptop' } });
    expect((await waitForStatus(db.ledger, vacation.jobId, ['completed', 'failed'])).status).toBe('completed');
    expect((await waitForStatus(db.ledger, approval.jobId, ['interrupted', 'failed'])).status).toBe('interrupted');
    // A person approves: the approval's second delivery resumes it.
    await deliver(queue, db.ledger, await db.ledger.resume(approval.jobId, { approved: true }));
    expect((await waitForStatus(db.ledger, approval.jobId, ['completed', 'failed'])).status).toBe('completed');

    await page.goto(`${board()}?status=completed`);
    await expect.poll(() => page.getByText('approval (redelivery 1)').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    const text = ((await page.locator('body').textContent()) ?? '').replace(/\s+/g, ' ');
    expect(text).toContain('vacation');
    expect(text).toContain('ran: the job completed');
    expect(text).toContain('ran: the job stopped at an interrupt and waits for a resume');
    expect(await page.locator(`a[href$="/admin/jobs/${vacation.jobId}"]`).count()).toBeGreaterThan(0);
    expect(text).not.toContain('a new laptop');
    await shot(page, `bull-board-completed-${backend}`, docsName(backend, 'bull-board-completed'));
  });

  it('shows the progress of a running job in the Active tab', async () => {
    const { db, q, queue, page } = stack;
    // The car booking takes a few seconds: the run is active, its flight and hotel already booked.
    const running = await submit(db.ledger, q, { graph: 'vacation', input: { delays: { car: 6_000 } } });
    await expect.poll(async () => (await queue.getJob(running.jobId))?.progress, { timeout: 15_000 }).toMatchObject({ effects: { settled: 2 } });
    await page.goto(`${board()}?status=active`);
    await expect.poll(() => page.getByText(`Ledger: ${running.jobId}`).count(), { timeout: 10_000 }).toBe(1);
    await page.getByText('Progress', { exact: true }).first().click();
    const text = ((await page.locator('body').textContent()) ?? '').replace(/\s+/g, ' ');
    expect(text).toMatch(/steps: ?\d+/);
    expect(text).toMatch(/started: ?[23]/);
    expect(text).toMatch(/settled: ?2/);
    await shot(page, `bull-board-active-${backend}`, docsName(backend, 'bull-board-active'));
    expect((await waitForStatus(db.ledger, running.jobId, ['completed', 'failed'])).status).toBe('completed');
  });
});
