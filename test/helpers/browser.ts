// Debian's chromium driven by playwright-core; no browser is ever downloaded.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.SIGNGATE_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
if (process.env.CI && !hasChromium) throw new Error(`CI is set but ${CHROMIUM} is missing; .ci/run must apt-get install chromium`);

/** Headless, sandbox off (root in CI), and no background traffic to hosts this machine cannot reach. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** On the /docs page (already authorized): opens GET /licenses, runs it, and returns the status and body shown. */
export async function tryLicenses(page: Page): Promise<{ status: string; body: string }> {
  const operation = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path', { hasText: /\/licenses$/ }) });
  await operation.locator('.opblock-summary').click();
  // tryItOutEnabled opens "Try it out" already; click it only when it did not.
  const execute = operation.locator('button.execute');
  await operation.locator('.opblock-body').waitFor();
  if (!(await execute.isVisible())) await operation.locator('button.try-out__btn').click();
  await execute.click();
  const body = operation.locator('.responses-wrapper .live-responses-table .response-col_description pre').first();
  await body.waitFor();
  return { status: await operation.locator('.live-responses-table .response .response-col_status').first().innerText(), body: await body.innerText() };
}
