// The HTML audit in a real browser (Debian's chromium through playwright-core): no console errors, the filter,
// sorting and details work, and the layout fits at desktop and phone widths in light and dark: no horizontal
// scroll, every column reachable, no text under 12 px, file names wrapped only at separators (/ . - _). Screenshots go to
// out/ (gitignored) for a person to look at.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { hasChromium, launchChromium } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, repoRoot, runCli } from '../helpers/fixtures.js';

const COLUMNS = ['File', 'Assembly', 'Version', 'Token', 'Strong name', 'Authenticode', 'Option', 'Vendor attribute', 'Needs signing', 'Job', 'Loads under', 'Outcome'];
const artifacts = join(repoRoot, 'out');

describe.skipIf(!hasChromium)('the HTML audit report in headless Chromium', () => {
  let browser: Browser;
  let url: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-audit-html-'));
    const html = join(dir, 'audit.html');
    // The delay-signed build output: a mix of failing, passing-by-nothing and not-required files; no job ledger.
    const r = runCli(['audit', fixturePath('addin'), fixturePath('findings/vendor-attribute-false'), '--key', fixturePath('test-keys/12345_public.snk'), '--vendor', 'Contoso', '-o', html, '--no-timestamp'], {
      env: { SIGNGATE_CACHE_DIR: join(dir, 'no-cache') },
    });
    expect(r.stderr).toContain('html audit written to');
    url = pathToFileURL(html).href;
    browser = await launchChromium();
    mkdirSync(artifacts, { recursive: true });
  }, 60_000);
  afterAll(async () => browser?.close());

  test('loads without console errors or requests beyond the file; filter, sort and details work', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(url);
    const rows = page.locator('#files tbody tr.file');
    const visible = () => page.locator('#files tbody tr.file:not([hidden])').count();
    expect(await rows.count()).toBe(9);
    await page.fill('#filter', 'Helpers');
    expect(await visible()).toBe(1);
    expect(await page.locator('#shown').innerText()).toBe('1 of 9 files shown');
    await page.fill('#filter', '');
    await page.selectOption('#outcome', 'not-required');
    expect(await visible()).toBe(2);
    await page.selectOption('#outcome', '');
    // A row's details open and travel with the row when the table is sorted.
    await rows.first().locator('button.more').click();
    await page.locator('#files thead th', { hasText: 'Assembly' }).click();
    const first = await rows.first().locator('td').nth(2).innerText();
    await page.locator('#files thead th', { hasText: 'Assembly' }).click();
    const firstDescending = await rows.first().locator('td').nth(2).innerText();
    expect(first).toBe('AddinTool');
    expect(firstDescending).toBe('ThirdParty.Json');
    const open = page.locator('#files tbody tr.more:not([hidden])');
    expect(await open.count()).toBe(1);
    expect(await open.evaluate((tr) => (tr.previousElementSibling as HTMLElement).innerText)).toContain('AddinTool');
    expect(problems).toEqual([]);
    expect(requests.every((u) => u.startsWith('file:'))).toBe(true);
  }, 60_000);

  test('the job column says where jobs come from when there is no ledger', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(url);
    expect(await page.locator('#job-source').innerText()).toContain('$SIGNGATE_CACHE_DIR/jobs.json), matched by the SHA-256 of the file the service returned. The machine that made this report has no ledger');
    const job = page.locator('#files tbody tr.file', { hasText: 'SampleAddin.Helpers' }).locator('td').nth(10); // the Job column
    expect(await job.innerText()).toBe('not recorded');
  }, 60_000);

  /** Every visible element with its own text, and its computed font size. */
  const textSizes = (page: Page) =>
    page.evaluate(() =>
      Array.from(document.body.querySelectorAll('*'))
        .filter((e) => Array.from(e.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim()) && (e as HTMLElement).getClientRects().length > 0 && !(e as HTMLElement).closest('script,style'))
        .map((e) => ({ text: e.textContent!.trim().slice(0, 40), size: parseFloat(getComputedStyle(e).fontSize) })),
    );

  /** Where the file names in the table break onto a new line: the character before each break. */
  const fileNameBreaks = (page: Page) =>
    page.evaluate(() => {
      const before: string[] = [];
      for (const row of Array.from(document.querySelectorAll('#files tbody tr.file'))) {
        const cell = (row as HTMLTableRowElement).cells[1]!;
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        let top: number | null = null;
        let previous = '';
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (let i = 0; i < node.textContent!.length; i++) {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const y = range.getBoundingClientRect().top;
            if (top !== null && y > top + 2) before.push(previous);
            top = y;
            previous = node.textContent![i]!;
          }
        }
      }
      return before;
    });

  test.each([
    [1280, 'light'],
    [1280, 'dark'],
    [390, 'light'],
    [390, 'dark'],
  ] as const)('fits at %i px (%s): no horizontal scroll, every column reachable, text at least 12 px', async (width, scheme) => {
    const page = await browser.newPage({ viewport: { width, height: 900 }, colorScheme: scheme });
    await page.goto(url);
    const overflow = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      table: (() => {
        const wrap = document.querySelector('.table-wrap')!;
        return wrap.scrollWidth - wrap.clientWidth;
      })(),
    }));
    expect(overflow).toEqual({ page: 0, table: 0 });
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(scheme === 'dark' ? 'rgb(13, 17, 23)' : 'rgb(255, 255, 255)');

    // Columns by priority: all of them on a desktop, File and Outcome on a phone; the rest in the details view.
    const shown = await page.locator('#files thead th:not(.toggle)').evaluateAll((ths) => ths.filter((th) => (th as HTMLElement).getClientRects().length > 0).map((th) => (th as HTMLElement).innerText.replace(/[ ▲▼]+$/, '')));
    expect(shown).toEqual(width === 1280 ? COLUMNS : ['File', 'Outcome']);
    const row = page.locator('#files tbody tr.file', { hasText: 'SampleAddin.Helpers' });
    await row.locator('button.more').click();
    const more = page.locator('#files tbody tr.more:not([hidden])');
    await expect.poll(() => more.count()).toBe(1);
    const labels = await more.locator('dt').allInnerTexts();
    for (const c of COLUMNS) expect(shown.includes(c) || labels.includes(c), `column ${c} at ${width} px`).toBe(true);
    const details = await more.innerText();
    expect(details).toContain('delay-signed with the right key, but never signed by the service');
    expect(await page.content()).not.toMatch(/Expected key/i);
    expect(details).toMatch(/SHA-256\s+[0-9a-f]{64}/);
    // The details view fits too.
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);

    const small = (await textSizes(page)).filter((t) => t.size < 12);
    expect(small).toEqual([]);
    expect(new Set(await fileNameBreaks(page))).toSatisfy((set: Set<string>) => [...set].every((c) => '/.-_'.includes(c)));
    await page.screenshot({ path: join(artifacts, `audit-${width}-${scheme}.png`), fullPage: true });
  }, 60_000);
});

test('paths wrap after a separator or a dot before a name, never inside a version such as net8.0', async () => {
  const { breakablePath } = await import('../../src/report/audit-html.js');
  expect(breakablePath('bin/net8.0/MyAddin.Helpers.dll')).toBe('bin/<wbr>net8.0/<wbr>MyAddin.<wbr>Helpers.<wbr>dll');
  expect(breakablePath('bin\\Release\\v1.2.3\\A.dll')).toBe('bin\\<wbr>Release\\<wbr>v1.2.3\\<wbr>A.<wbr>dll');
});
