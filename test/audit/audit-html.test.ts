// The HTML audit in a real browser (Debian's chromium through playwright-core): no console errors,
// the filter and sorting work, and screenshots at desktop and narrow widths for a person to look at.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { hasChromium, launchChromium } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, repoRoot, runCli } from '../helpers/fixtures.js';


describe.skipIf(!hasChromium)('the HTML audit report in headless Chromium', () => {
  let browser: Browser;
  let url: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-audit-html-'));
    const html = join(dir, 'audit.html');
    // The delay-signed build output: a mix of failing, passing-by-nothing and not-required files.
    const r = runCli(['audit', fixturePath('addin'), fixturePath('findings/vendor-attribute-false'), '--key', fixturePath('test-keys/12345_public.snk'), '--vendor', 'Contoso', '-o', html, '--no-timestamp']);
    expect(r.stderr).toContain('html audit written to');
    url = pathToFileURL(html).href;
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => browser?.close());

  test('loads without console errors or requests beyond the file; filter and sort work', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(url);
    const rows = page.locator('#files tbody tr');
    const visible = () => page.locator('#files tbody tr:not([hidden])').count();
    expect(await rows.count()).toBe(9);
    await page.fill('#filter', 'Helpers');
    expect(await visible()).toBe(1);
    expect(await page.locator('#shown').innerText()).toBe('1 of 9 files shown');
    await page.fill('#filter', '');
    await page.selectOption('#outcome', 'not-required');
    expect(await visible()).toBe(2);
    await page.selectOption('#outcome', '');
    await page.locator('#files thead th', { hasText: 'Assembly' }).click();
    const first = await page.locator('#files tbody tr').first().locator('td').nth(1).innerText();
    await page.locator('#files thead th', { hasText: 'Assembly' }).click();
    const firstDescending = await page.locator('#files tbody tr').first().locator('td').nth(1).innerText();
    expect(first).toBe('AddinTool');
    expect(firstDescending).toBe('ThirdParty.Json');
    expect(problems).toEqual([]);
    expect(requests.every((u) => u.startsWith('file:'))).toBe(true);
    mkdirSync(join(repoRoot, 'out'), { recursive: true });
    await page.screenshot({ path: join(repoRoot, 'out', 'audit-desktop.png'), fullPage: false });
  }, 60_000);

  test('narrow screens: no page-wide horizontal scroll; dark scheme applies', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    await page.goto(url);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe('rgb(13, 17, 23)');
    await page.screenshot({ path: join(repoRoot, 'out', 'audit-narrow-dark.png'), fullPage: false });
    writeFileSync(join(repoRoot, 'out', 'audit-screenshots.txt'), 'out/audit-desktop.png, out/audit-narrow-dark.png\n');
  }, 60_000);
});
