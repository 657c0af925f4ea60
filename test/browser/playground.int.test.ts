// The playground (/playground) in a real headless Chromium, on an in-process producer and worker:
// the page's React code drives the official SDK's useStream against the producer's own API. A
// chat message streams its reply token by token (tokenDelayMs slows it down, so partial text is
// seen while the run is still running), then the run shows attempt 1, status success and its
// effects. The page is served from the TypeScript sources here: its script is bundled on the
// first request. Screenshot to test-artifacts/ (docs/playground.png with RUNLEDGER_UPDATE_DOCS=1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, shot } from '../support/browser';
import { type InProcessStack, startInProcessStack } from '../support/in-process-stack';
import '../support/provided';

const KEY = 'acme-key-0123456789abcdef01';
const MESSAGE = 'hello from the playground';
const REPLY = `You said: ${MESSAGE}`;
type Doc = { querySelector(selector: string): { textContent: string | null } | null };
/** Runs in the page: the reply's text and the run's status while the text is still partial, else null. */
const partialReply = (full: string) => {
  const doc = (globalThis as unknown as { document: Doc }).document;
  const text = doc.querySelector('.message[data-role="ai"] .content')?.textContent ?? '';
  const status = doc.querySelector('#status')?.textContent ?? '';
  return text.length > 0 && text.length < full.length && status !== 'success' ? { text, status } : null;
};

describe.skipIf(!hasChromium)('the playground in headless Chromium', () => {
  let stack: InProcessStack;

  beforeAll(async () => {
    stack = await startInProcessStack('browser_playground', {
      security: { apiKeys: [{ tenant: 'acme', key: KEY }] },
      workerId: 'playground-worker',
      viewport: { width: 1100, height: 800 },
    });
  });
  afterAll(() => stack?.close());

  it('asks for the key, then streams a chat reply token by token and shows the run: attempt 1, success, effects', async () => {
    const { db, page, base, problems } = stack;
    await page.goto(`${base}/playground`);
    // Auth is on: the page itself is public, its API calls need the key a person pastes.
    await page.locator('#problem').getByText('needs an API key').waitFor();
    await page.locator('#api-key').fill(KEY);
    await page.locator('#graph option[value="vacation"]').waitFor({ state: 'attached' });
    expect(await page.locator('#graph option').allTextContents()).toEqual(['approval', 'chat', 'echo', 'vacation']);
    expect(await page.locator('#graph').inputValue()).toBe('chat');
    problems.length = 0; // the 401 of the first, keyless, search

    await page.locator('#message').fill(MESSAGE);
    await page.locator('#more-input').fill('{"tokenDelayMs": 80}');
    await page.locator('#composer button[type="submit"]').click();
    // Part of the reply is on the page while the run is still running (read in one go in the page).
    const partial = await page.waitForFunction(partialReply, REPLY, { polling: 'raf', timeout: 30_000 });
    const seen = (await partial.jsonValue()) as { text: string; status: string };
    expect(REPLY.startsWith(seen.text)).toBe(true);

    await page.locator('#status[data-status="success"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('.message[data-role="ai"] .content').textContent()).toBe(REPLY);
    expect(await page.locator('.message[data-role="human"] .content').textContent()).toBe(MESSAGE);
    expect(await page.locator('#attempt').textContent()).toBe('1');
    expect(await page.locator('#effects').textContent()).toBe('none');
    // The run on the page is the Runledger job (run id = job id).
    const runId = (await page.locator('#run-id').textContent()) ?? '';
    const job = await db.ledger.get(runId);
    expect(job).toMatchObject({ graph: 'chat', status: 'completed', attempt: 1 });
    await shot(page, 'playground', 'playground');
    expect(problems).toEqual([]);
  });

  it('shows a run with effects: the vacation graph books three', async () => {
    const { page, problems } = stack;
    await page.locator('#graph').selectOption('vacation');
    await page.locator('#message').fill('');
    await page.locator('#more-input').fill('{}');
    await page.locator('#composer button[type="submit"]').click();
    await page.locator('#status[data-status="success"]').waitFor({ timeout: 60_000 });
    expect((await page.locator('#effects .effect').allTextContents()).sort()).toEqual([
      'book_car: committed (1 attempt)',
      'book_flight: committed (1 attempt)',
      'book_hotel: committed (1 attempt)',
    ]);
    expect(problems).toEqual([]);
  });
});
