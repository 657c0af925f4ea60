// Headless Chromium for the page tests: Debian's /usr/bin/chromium driven by playwright-core,
// started with the flags this closed network needs (no background lookups). A test file calls
// `describe.skipIf(!hasChromium)` and `launchBrowser()`; `openPage` collects console errors and
// page errors so a test can assert there were none; `shot` writes a screenshot to test-artifacts/
// and, with RUNLEDGER_UPDATE_DOCS=1, to docs/ for the README.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const artifacts = path.resolve(import.meta.dirname, '../../test-artifacts');
const docs = path.resolve(import.meta.dirname, '../../docs');

export const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`[browser test] SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium).`);

/** True when this run should also refresh the README's screenshots under docs/. */
export const updateDocs = process.env.RUNLEDGER_UPDATE_DOCS === '1';

export function launchBrowser(): Promise<Browser> {
  mkdirSync(artifacts, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/** A new page whose console errors and uncaught page errors land in `problems`. */
export async function openPage(browser: Browser, viewport = { width: 1280, height: 1000 }): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport });
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return { page, problems };
}

/**
 * Screenshot of a page (full length) or of one element to test-artifacts/<name>.png; with
 * `docsName` and RUNLEDGER_UPDATE_DOCS=1, the same view (not full length) also goes to docs/.
 */
export async function shot(target: Page | Locator, name: string, docsName?: string): Promise<void> {
  const isPage = 'goto' in target;
  await target.screenshot({ path: path.join(artifacts, `${name}.png`), ...(isPage ? { fullPage: true } : {}) });
  if (docsName && updateDocs) await target.screenshot({ path: path.join(docs, `${docsName}.png`) });
}
