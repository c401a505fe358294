// The documentation page in a real browser: Debian's chromium driven by playwright-core (no browser download).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { hasChromium, launchChromium, tryLicenses } from '../../helpers/browser.js';
import { WAIT_CEILING_MS } from '../../helpers/wait.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { repoRoot } from '../../helpers/fixtures.js';
import { startServer, type TestServer } from '../../helpers/server.js';

describe.skipIf(!hasChromium)('the /docs page in headless Chromium', () => {
  let browser: Browser;
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  test('loads without console errors, authorizes with a token, runs GET /licenses and shows the optionIds', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    const docsUrl = server.baseUrl.replace('/assembly-signing/v1.0', '/docs/');
    await page.goto(docsUrl, { waitUntil: 'networkidle' });
    await page.locator('.swagger-ui .info .title').waitFor();
    expect(await page.locator('.swagger-ui .info .title').innerText()).toContain('Assembly signing service');

    // Authorize with a bearer token.
    await page.locator('button.authorize').first().click();
    await page.locator('.modal-ux input').first().fill(server.token());
    await page.locator('.modal-ux .auth-btn-wrapper button.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();

    // Try GET /licenses.
    const { status, body: text } = await tryLicenses(page);
    expect(text).toContain('12345');
    expect(text).toContain('67890');
    expect(status).toContain('200');

    mkdirSync(join(repoRoot, 'out'), { recursive: true });
    await page.screenshot({ path: join(repoRoot, 'out', 'docs-page.png'), fullPage: false });
    expect(problems).toEqual([]);
  });

  test('at 390 px (a phone) nothing is clipped or wider than the screen, and the tags read as written', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(server.baseUrl.replace('/assembly-signing/v1.0', '/docs/'), { waitUntil: 'networkidle' });
    await page.locator('.swagger-ui .info .title').waitFor();
    // Elements whose content is wider than their box (the skip link is swagger-ui's own, 1 px until focused).
    const clipped = await page.evaluate(() =>
      [...document.querySelectorAll('body *')]
        .filter((e) => e.getClientRects().length > 0 && e.clientWidth > 1 && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')
        .map((e) => `${e.tagName}.${String((e as HTMLElement).className)}`),
    );
    expect(clipped).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await page.locator('.opblock-tag-section').first().innerText()).toContain('<optionId>_public.snk');
    await page.close();
  });

  test('never framed by another origin; a query on its address does not break it', async () => {
    const docs = server.baseUrl.replace('/assembly-signing/v1.0', '/docs');
    for (const path of ['/', '/static/oauth2-redirect.html']) {
      const r = await fetch(`${docs}${path}`);
      expect(r.headers.get('x-frame-options'), path).toBe('DENY');
      expect(r.headers.get('content-security-policy'), path).toContain("frame-ancestors 'none'");
    }
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${docs}/?utm_source=mail`, { waitUntil: 'networkidle' });
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: WAIT_CEILING_MS });
    expect(await page.locator('.swagger-ui .info .title').innerText()).toContain('Assembly signing service');
    await page.close();
  });
});
