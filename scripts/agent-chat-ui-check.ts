// Manual check (not part of npm test: it needs agent-chat-ui's own install): LangChain's
// agent-chat-ui, unchanged, against Runledger in headless Chromium. It expects both to be running
// already (docs/langgraph-api.md, "Using agent-chat-ui", has the two commands): Runledger's dev
// stack with the built-in `chat` graph, and agent-chat-ui's `next dev` pointed at it.
//   npx tsx scripts/agent-chat-ui-check.ts
// ACUI_API_URL (default http://127.0.0.1:3151) and ACUI_UI_URL (default http://127.0.0.1:3152)
// move them. Steps: send a message and read the reply; Edit the message (a run from the checkpoint
// before it) and see the new branch with its switcher, both branches readable; Refresh
// (regenerate) the reply and see its switcher. The thread's history on the server must hold the
// three branches. Screenshots: docs/images/agent-chat-ui-edit.png and
// docs/images/agent-chat-ui-regenerate.png. Exits 1 naming the step that did not hold.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchBrowser, openPage } from '../test/support/browser';

const API = process.env.ACUI_API_URL ?? 'http://127.0.0.1:3151';
const UI = process.env.ACUI_UI_URL ?? 'http://127.0.0.1:3152';
const FIRST = 'Hello from agent-chat-ui';
const EDITED = 'Hello again, edited in agent-chat-ui';
const said = (text: string) => `You said: ${text}`;
const images = path.resolve(import.meta.dirname, '../docs/images');
const failureShot = path.resolve(import.meta.dirname, '../test-artifacts/agent-chat-ui-failure.png');
// `next dev` compiles the page on its first request: minutes on a busy two-core machine.
const COMPILE_MS = 300_000;
const STEP_MS = 60_000;

class CheckFailed extends Error {}

function check(ok: boolean, what: string): void {
  if (!ok) throw new CheckFailed(what);
}

async function reachable(url: string, timeoutMs: number, hint: string): Promise<void> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    check(res.ok, `${url} answered ${res.status}. ${hint}`);
  } catch (err) {
    if (err instanceof CheckFailed) throw err;
    throw new CheckFailed(`${url} is not reachable (${(err as Error).message}). ${hint}`);
  }
}

/** The human and AI message rows agent-chat-ui renders (its own class names: right- and left-aligned groups). */
const humans = (page: Page) => page.locator('div.group.ml-auto');
const ais = (page: Page) => page.locator('div.group.mr-auto');
/** The "n / m" text of a message's branch switcher. */
const switcher = (message: Locator) => message.locator('div:has(> span.text-sm) > span.text-sm');
const switcherButton = (message: Locator, which: 'previous' | 'next') => message.locator('div:has(> span.text-sm) > button').nth(which === 'previous' ? 0 : 1);

/** Waits until the run is over: the composer shows Send again (Cancel while a run streams). */
async function runEnds(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Send', exact: true }).waitFor({ timeout: STEP_MS });
}

/** Waits until the thread shows exactly one exchange: `human`, answered by the chat graph. */
async function showsExchange(page: Page, human: string, what: string): Promise<void> {
  const reply = said(human);
  try {
    await page.waitForFunction(
      ([h, r]) => {
        const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ textContent: string | null }> } }).document;
        const hs = Array.from(doc.querySelectorAll('div.group.ml-auto'), (e) => e.textContent ?? '');
        const as = Array.from(doc.querySelectorAll('div.group.mr-auto'), (e) => e.textContent ?? '');
        return hs.length === 1 && as.length === 1 && hs[0]?.includes(h as string) && as[0]?.includes(r as string);
      },
      [human, reply],
      { timeout: STEP_MS },
    );
  } catch {
    const hs = await humans(page).allInnerTexts();
    const as = await ais(page).allInnerTexts();
    throw new CheckFailed(
      `${what}: expected one message "${human}" answered "${reply}", the page shows humans ${JSON.stringify(hs)}, replies ${JSON.stringify(as)}`,
    );
  }
}

async function expectSwitcher(message: Locator, expected: string, what: string): Promise<void> {
  try {
    await switcher(message).filter({ hasText: expected }).waitFor({ timeout: STEP_MS });
  } catch {
    const seen = await switcher(message).allInnerTexts();
    throw new CheckFailed(`${what}: expected the branch switcher "${expected}", the page shows ${seen.length ? JSON.stringify(seen) : 'no switcher'}`);
  }
}

type HistoryState = { values: { messages?: { type: string; content: unknown }[] }; checkpoint: { checkpoint_id: string } };

/** The thread's final states on the server: one per branch, the texts of its messages. */
async function branchesOnServer(threadId: string): Promise<string[][]> {
  const res = await fetch(`${API}/threads/${threadId}/history`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ limit: 100 }),
  });
  check(res.ok, `POST /threads/${threadId}/history answered ${res.status}: ${await res.clone().text()}`);
  const text = (c: unknown) => (typeof c === 'string' ? c : (c as { text?: string }[]).map((p) => p.text ?? '').join(''));
  return ((await res.json()) as HistoryState[])
    .map((s) => (s.values.messages ?? []).map((m) => `${m.type}: ${text(m.content)}`))
    .filter((messages) => messages.length === 2);
}

async function run(page: Page, problems: string[]): Promise<void> {
  await page.goto(UI, { timeout: COMPILE_MS });
  // Next's dev-mode badge ("1 Issue", a React warning inside agent-chat-ui) would cover the screenshots.
  await page.addStyleTag({ content: 'nextjs-portal { display: none !important; }' });

  console.log(`1. send "${FIRST}"`);
  const composer = page.getByPlaceholder('Type your message...');
  await composer.waitFor({ timeout: COMPILE_MS });
  await composer.fill(FIRST);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await showsExchange(page, FIRST, 'the first reply');
  await runEnds(page);
  const threadId = new URL(page.url()).searchParams.get('threadId');
  check(!!threadId, `the UI put no threadId in its URL after the first run (${page.url()})`);

  console.log(`2. Edit it to "${EDITED}"`);
  const human = humans(page).first();
  await human.hover();
  await human.getByRole('button', { name: 'Edit', exact: true }).click();
  await human.locator('textarea').fill(EDITED);
  await human.getByRole('button', { name: 'Submit', exact: true }).click();
  await showsExchange(page, EDITED, 'after Edit');
  await runEnds(page);
  await human.hover();
  await expectSwitcher(human, '2 / 2', 'after Edit, the edited message');
  // Both branches are there: back to the first, then forward to the edit again.
  await switcherButton(human, 'previous').click();
  await showsExchange(page, FIRST, 'switched back to branch 1 / 2');
  await expectSwitcher(humans(page).first(), '1 / 2', 'on branch 1');
  await switcherButton(humans(page).first(), 'next').click();
  await showsExchange(page, EDITED, 'switched forward to branch 2 / 2');
  await humans(page).first().hover();
  await expectSwitcher(humans(page).first(), '2 / 2', 'back on branch 2');
  await page.screenshot({ path: path.join(images, 'agent-chat-ui-edit.png') });

  console.log('3. Refresh (regenerate) the reply');
  const ai = ais(page).first();
  await ai.hover();
  await ai.getByRole('button', { name: 'Refresh', exact: true }).click();
  await runEnds(page);
  await showsExchange(page, EDITED, 'after Refresh');
  await ais(page).first().hover();
  await expectSwitcher(ais(page).first(), '2 / 2', 'after Refresh, the regenerated reply');
  await page.screenshot({ path: path.join(images, 'agent-chat-ui-regenerate.png') });

  console.log(`4. the server's history of thread ${threadId} holds three branches`);
  const branches = (await branchesOnServer(threadId as string)).map((b) => b.join(' | ')).sort();
  const first = `human: ${FIRST} | ai: ${said(FIRST)}`;
  const edited = `human: ${EDITED} | ai: ${said(EDITED)}`;
  check(
    JSON.stringify(branches) === JSON.stringify([first, edited, edited].sort()),
    `expected the first exchange once and the edited one twice (edit, regenerate), the history has ${JSON.stringify(branches)}`,
  );
  check(problems.length === 0, `the page reported errors: ${problems.join(' · ')}`);
}

mkdirSync(images, { recursive: true });
let browser: Browser | undefined;
let page: Page | undefined;
try {
  await reachable(`${API}/ok`, 10_000, 'Start Runledger first (docs/langgraph-api.md, "Using agent-chat-ui").');
  await reachable(UI, COMPILE_MS, 'Start agent-chat-ui first (docs/langgraph-api.md, "Using agent-chat-ui").');
  browser = await launchBrowser();
  const opened = await openPage(browser, { width: 1100, height: 700 });
  page = opened.page;
  // Errors that matter: the page's own crashes and any API call Runledger refused.
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('response', (r) => {
    if (r.url().startsWith(API) && r.status() >= 400) problems.push(`${r.request().method()} ${r.url()} answered ${r.status()}`);
  });
  await run(page, problems);
  console.log('agent-chat-ui check passed: send, Edit (new branch, switcher 2 / 2), Refresh (switcher 2 / 2), three branches on the server.');
} catch (err) {
  const shotTaken = page
    ? await page.screenshot({ path: failureShot }).then(
        () => true,
        () => false,
      )
    : false;
  const message = err instanceof CheckFailed ? err.message : String((err as Error).stack ?? err);
  console.error(`agent-chat-ui check FAILED: ${message}${shotTaken ? `\n(the page as it was: ${failureShot})` : ''}`);
  process.exitCode = 1;
} finally {
  await browser?.close();
}
