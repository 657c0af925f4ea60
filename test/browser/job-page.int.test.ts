// A job's dashboard page in a real headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core), on an in-process producer and worker: a vacation job runs for real and its
// page shows the run as a conversation (who spoke, the tool calls with their arguments, the tool
// results), not LangChain's serialised objects; an approval job parks and its page shows the
// graph's question above the resume form, then resumes from that form. Screenshots go to
// test-artifacts/ (docs/ with RUNLEDGER_UPDATE_DOCS=1). Skipped without Chromium.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, shot } from '../support/browser';
import { type InProcessStack, startInProcessStack } from '../support/in-process-stack';
import { submit, waitForStatus } from '../support/stack';
import '../support/provided';

describe.skipIf(!hasChromium)('a job page in headless Chromium', () => {
  let stack: InProcessStack;

  beforeAll(async () => {
    stack = await startInProcessStack('browser_job_page', { workerId: 'job-page-worker' });
  });
  afterAll(() => stack?.close());

  it('shows a finished vacation run as a conversation: roles, tool calls with arguments, tool results', async () => {
    const { db, q, page, base } = stack;
    const { jobId } = await submit(db.ledger, q, { graph: 'vacation', input: {} });
    expect((await waitForStatus(db.ledger, jobId, ['completed', 'failed'])).status).toBe('completed');
    await page.goto(`${base}/admin/jobs/${jobId}`);
    const result = page.locator('#result');
    const roles = await result.locator('.conversation > .message').evaluateAll((items) => items.map((li) => li.getAttribute('data-role')));
    expect(roles).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'assistant']);
    const calls = result.locator('.message[data-role="assistant"] .tool-call');
    expect(await calls.locator('.tool-name').allTextContents()).toEqual(['book_flight', 'book_hotel', 'book_car']);
    // Each call's arguments are shown as JSON, as the model gave them.
    for (const args of await calls.locator('.tool-args').allTextContents()) expect(JSON.parse(args)).toEqual(expect.any(Object));
    const toolResults = await result.locator('.message[data-role="tool"]').allTextContents();
    expect(toolResults.join(' ')).toMatch(/book_flight.*FLIGHT-\d+.*book_hotel.*HOTEL-\d+.*book_car.*CAR-\d+/s);
    expect(await result.locator('.message').last().textContent()).toMatch(/FLIGHT-\d+/);
    // No serialised LangChain object on the page unless one opens the raw JSON.
    expect(await result.locator('details.raw').getAttribute('open')).toBeNull();
    expect(await page.getByText('kwargs').filter({ visible: true }).count()).toBe(0);
    await result.locator('details.raw summary').click();
    expect(await result.locator('details.raw pre').textContent()).toContain('"kwargs"');
    expect(await page.getByText('kwargs').filter({ visible: true }).count()).toBeGreaterThan(0);
    await result.locator('details.raw summary').click();
    expect(await page.locator('#input').textContent()).toContain('Input');
    // The API carries the same conversation beside the raw result.
    const api = (await (await fetch(`${base}/v1/jobs/${jobId}`)).json()) as { conversation: { result: Array<{ role: string }> }; result: unknown };
    expect(api.conversation.result.map((m) => m.role)).toEqual(roles);
    expect(JSON.stringify(api.result)).toContain('"kwargs"');
    await shot(page, 'dashboard-job-conversation');
    await shot(result, 'dashboard-job-conversation-result', 'dashboard-job-conversation');
  });

  it("shows a parked approval's question above the resume form, and resumes from it", async () => {
    const { db, q, page, base, problems } = stack;
    const { jobId } = await submit(db.ledger, q, { graph: 'approval', input: { request: 'buy a boat' } });
    expect((await waitForStatus(db.ledger, jobId, ['interrupted', 'failed'])).status).toBe('interrupted');
    await page.goto(`${base}/admin/jobs/${jobId}`);
    const question = page.locator('.interrupt-question');
    expect(await question.textContent()).toBe('Approve "buy a boat"? Resume with { "approved": true|false }.');
    const api = (await (await fetch(`${base}/v1/jobs/${jobId}`)).json()) as { conversation: { questions: string[] } };
    expect(api.conversation.questions).toEqual([await question.textContent()]);
    const form = page.locator('form[data-action="resume"]');
    const [questionBox, formBox] = [await question.boundingBox(), await form.boundingBox()];
    expect(questionBox && formBox && questionBox.y + questionBox.height <= formBox.y).toBe(true);
    await shot(page, 'dashboard-job-question', 'dashboard-job-question');

    await form.locator('textarea[name="value"]').fill('{"approved":true}');
    await form.locator('input[name="confirm"]').check();
    await form.locator('button[type="submit"]').click();
    await page.waitForURL(/done=resume/);
    expect((await waitForStatus(db.ledger, jobId, ['completed', 'failed'])).status).toBe('completed');
    await page.reload();
    expect(await page.locator('.interrupt-question').count()).toBe(0);
    expect(await page.locator('#result').textContent()).toContain('buy a boat: approved');
    expect(problems).toEqual([]);
  });
});
