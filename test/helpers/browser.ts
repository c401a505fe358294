// Debian's chromium driven by playwright-core; no browser is ever downloaded. Also: axe-core's accessibility check
// in a page, and a PNG that carries the text of what it shows (so a test can tell a stale screenshot).
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { chromium, type Browser, type Page } from 'playwright-core';
import { WAIT_CEILING_MS } from './wait.js';

export const CHROMIUM = process.env.SIGNGATE_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
if (process.env.CI && !hasChromium) throw new Error(`CI is set but ${CHROMIUM} is missing; .ci/run must apt-get install chromium`);

/**
 * Headless, sandbox off (root in CI), and no background traffic to hosts this machine cannot reach. Its pages
 * wait for what they are told to (a click's target, a locator) up to WAIT_CEILING_MS instead of Playwright's 30 s,
 * and Playwright's error says what the wait was for.
 */
export async function launchChromium(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: WAIT_CEILING_MS,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(WAIT_CEILING_MS);
    return context;
  };
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (options) => {
    const page = await newPage(options);
    page.context().setDefaultTimeout(WAIT_CEILING_MS);
    return page;
  };
  return browser;
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

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  /** The elements, as CSS selectors, with axe's summary of what is wrong with the first. */
  readonly nodes: readonly string[];
}

/** Runs axe-core (from node_modules, injected into the page) over the whole page; its violations of every impact. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (
            context: Document,
            options: object,
          ) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[]; failureSummary?: string }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary ?? ''}`),
    }));
  });
}

/**
 * The text a page shows from its top to the end of one element, a line per block (a paragraph, a table cell, a
 * list item), whitespace folded: what a screenshot of that part shows, in words. What is laid out (not
 * display: none, not a 1-pixel hidden label) counts, wherever the fonts of a machine put it.
 */
export function textDownTo(page: Page, selector: string): Promise<string> {
  return page.evaluate((selector) => {
    const end = document.querySelector(selector);
    if (!end) throw new Error(`no ${selector} on the page`);
    const blocks = new Map<Element, string>();
    const blockOf = (e: Element) => {
      let b = e;
      while (b !== document.body && getComputedStyle(b).display.startsWith('inline')) b = b.parentElement!;
      return b;
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!end.contains(node) && end.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING) break;
      if (!node.textContent!.trim() || node.parentElement!.closest('script,style')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      if (!Array.from(range.getClientRects()).some((r) => r.width > 1 && r.height > 1)) continue;
      const block = blockOf(node.parentElement!);
      blocks.set(block, (blocks.get(block) ?? '') + node.textContent);
    }
    return [...blocks.values()].map((t) => t.replace(/\s+/g, ' ').trim()).join('\n');
  }, selector);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A PNG with an iTXt chunk (UTF-8 text under a keyword) inserted before its end. */
export function pngWithText(png: Uint8Array, keyword: string, text: string): Buffer {
  const bytes = Buffer.from(png);
  if (!bytes.subarray(0, 8).equals(PNG_SIGNATURE)) throw new Error('not a PNG');
  const iend = bytes.length - 12; // IEND: length 0, type, CRC
  if (bytes.toString('latin1', iend + 4, iend + 8) !== 'IEND') throw new Error('the PNG does not end with IEND');
  // keyword, 0, compression flag 0, method 0, no language tag (0), no translated keyword (0), the text.
  const data = Buffer.concat([Buffer.from(keyword, 'latin1'), Buffer.from([0, 0, 0, 0, 0]), Buffer.from(text, 'utf8')]);
  return Buffer.concat([bytes.subarray(0, iend), pngChunk('iTXt', data), bytes.subarray(iend)]);
}

/** The text of a PNG's uncompressed iTXt chunk under a keyword, or undefined. */
export function pngText(png: Uint8Array, keyword: string): string | undefined {
  const bytes = Buffer.from(png);
  for (let at = 8; at + 12 <= bytes.length; ) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (type === 'iTXt' && data.subarray(0, keyword.length + 1).equals(Buffer.from(`${keyword}\0`, 'latin1'))) {
      let p = keyword.length + 1;
      if (data[p] !== 0) return undefined; // compressed: not written by pngWithText
      p += 2;
      p = data.indexOf(0, p) + 1; // language tag
      p = data.indexOf(0, p) + 1; // translated keyword
      return data.toString('utf8', p);
    }
    at += 12 + length;
  }
  return undefined;
}

/** The text a PNG file carries under a keyword, or undefined when the file is missing or has none. */
export function pngFileText(path: string, keyword: string): string | undefined {
  return existsSync(path) ? pngText(readFileSync(path), keyword) : undefined;
}
