// Debian's chromium driven by playwright-core; no browser is ever downloaded.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
