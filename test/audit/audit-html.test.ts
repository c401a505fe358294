// The HTML audit in a real browser (Debian's chromium through playwright-core): no console errors, the filter,
// sorting (by mouse and keyboard) and details work, and the layout fits at desktop and phone widths in light and
// dark: no horizontal scroll, every column reachable, no text under 12 px, file names wrapped only at separators
// (/ . - _); axe-core finds nothing serious or critical. Screenshots go to out/ (gitignored) for a person to look
// at; the README's docs/images/audit-report.png is made here too. Then the words of every audit format: counts
// ("1 file", "2 files") and which runtimes a file's load rows speak of.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, hasChromium, launchChromium, pngFileText, pngWithText, textDownTo } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixture, fixturePath, repoRoot, runCli } from '../helpers/fixtures.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { writeFileAtomic } from '../../src/workflows/files.js';
import { loadDetails } from '../../src/report/audit-load.js';
import { renderAudit } from '../../src/workflows/audit.js';
import { defaultSettings, buildAudit } from '../helpers/check.js';
import type { AuditLoad } from '../../src/audit/model.js';

const COLUMNS = [
  'File',
  'Assembly',
  'Version',
  'Token',
  'Strong name',
  'Authenticode',
  'Option',
  'Vendor attribute',
  'Needs signing',
  'Job',
  'Loads under',
  'Outcome',
];
const artifacts = join(repoRoot, 'out');
const KEY = fixturePath('test-keys/12345_public.snk');
/** A file name with every character HTML escapes, an entity already written out, and letters beyond ASCII. */
const ODD_NAME = `a&amp;b <i>Ünïcødé "q" 'x' ✓.dll`;
/** Text as a regular expression that matches exactly it. */
const regExpOf = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `signgate audit` (the built CLI) without a job ledger; extra arguments after the paths. */
function auditCli(paths: readonly string[], ...extra: string[]) {
  return runCli(['audit', ...paths, '--key', KEY, '--vendor', 'Contoso', '--no-timestamp', ...extra], {
    env: { SIGNGATE_CACHE_DIR: join(tmpdir(), 'signgate-audit-html-no-cache') },
  });
}

/** A clean release: the sample add-in signed with the sandbox key (no errors), plus a third-party file under ODD_NAME. */
function cleanRelease(): string {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-clean-release-'));
  const pair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));
  for (const name of ['SampleAddin.dll', 'SampleAddin.Helpers.dll', 'SampleAddin.XmlSerializers.dll', 'AddinTool.exe', 'de/SampleAddin.resources.dll']) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), signAssembly(readModule(fixture(`addin/${name}`)), pair));
  }
  copyFileSync(fixturePath('addin/ThirdParty.Json.dll'), join(dir, ODD_NAME));
  return dir;
}

describe.skipIf(!hasChromium)('the HTML audit report in headless Chromium', () => {
  let browser: Browser;
  /** The delay-signed build output: errors. */
  let url: string;
  /** A signed release: no errors, and a file named ODD_NAME. */
  let cleanUrl: string;
  /** An empty folder, and one .NET 8 file. */
  let emptyUrl: string;
  let oneUrl: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-audit-html-'));
    const html = join(dir, 'audit.html');
    // The delay-signed build output: a mix of failing, passing-by-nothing and not-required files; no job ledger.
    const r = runCli(
      [
        'audit',
        fixturePath('addin'),
        fixturePath('findings/vendor-attribute-false'),
        '--key',
        fixturePath('test-keys/12345_public.snk'),
        '--vendor',
        'Contoso',
        '-o',
        html,
        '--no-timestamp',
      ],
      {
        env: { SIGNGATE_CACHE_DIR: join(dir, 'no-cache') },
      },
    );
    expect(r.stderr).toContain('html audit written to');
    url = pathToFileURL(html).href;
    const clean = auditCli([cleanRelease()], '-o', join(dir, 'clean.html'));
    expect(clean.stderr).toContain(', 0 errors');
    cleanUrl = pathToFileURL(join(dir, 'clean.html')).href;
    // An empty report, as the library makes one (the command refuses a release with no assembly: SG_ERR_NO_INPUT).
    writeFileSync(join(dir, 'empty.html'), renderAudit(await buildAudit([], { settings: defaultSettings() }), 'html', null));
    emptyUrl = pathToFileURL(join(dir, 'empty.html')).href;
    auditCli([fixturePath('sdk/bin/net8.0/SampleAddin.dll')], '-o', join(dir, 'one.html'));
    oneUrl = pathToFileURL(join(dir, 'one.html')).href;
    browser = await launchChromium();
    mkdirSync(artifacts, { recursive: true });
  }, 180_000);
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
    expect(await page.locator('#job-source').innerText()).toContain(
      '$SIGNGATE_CACHE_DIR/jobs.json), matched by the SHA-256 of the file the service returned. The machine that made this report has no ledger',
    );
    const job = page.locator('#files tbody tr.file', { hasText: 'SampleAddin.Helpers' }).locator('td').nth(10); // the Job column
    expect(await job.innerText()).toBe('not recorded');
  }, 60_000);

  /** Every visible element with its own text, and its computed font size. */
  const textSizes = (page: Page) =>
    page.evaluate(() =>
      Array.from(document.body.querySelectorAll('*'))
        .filter(
          (e) =>
            Array.from(e.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim()) &&
            (e as HTMLElement).getClientRects().length > 0 &&
            !(e as HTMLElement).closest('script,style'),
        )
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
  ] as const)(
    'fits at %i px (%s): no horizontal scroll, every column reachable, text at least 12 px',
    async (width, scheme) => {
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
      const shown = await page
        .locator('#files thead th:not(.toggle)')
        .evaluateAll((ths) =>
          ths.filter((th) => (th as HTMLElement).getClientRects().length > 0).map((th) => (th as HTMLElement).innerText.replace(/[ ▲▼]+$/, '')),
        );
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
    },
    60_000,
  );

  test('the column headers are buttons: Tab reaches them, Enter and Space sort, aria-sort follows, the focus shows', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(url);
    const sortOf = () =>
      page
        .locator('#files thead th')
        .evaluateAll((ths) =>
          ths
            .filter((th) => th.hasAttribute('aria-sort'))
            .map((th) => `${(th as HTMLElement).innerText.replace(/[ ▲▼]+$/, '')}: ${th.getAttribute('aria-sort')}`),
        );
    const firstAssembly = () => page.locator('#files tbody tr.file').first().locator('td').nth(2).innerText();
    // The report lists files by path: the File column is sorted ascending from the start, and only it.
    expect(await sortOf()).toEqual(['File: ascending']);
    // From the outcome filter, Tab goes to the headers: File, then Assembly.
    await page.focus('#outcome');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const e = document.activeElement as HTMLElement;
      const style = getComputedStyle(e);
      return {
        tag: e.tagName,
        name: e.innerText.trim(),
        inHeader: e.closest('th') !== null,
        outline: style.outlineStyle,
        width: parseFloat(style.outlineWidth),
      };
    });
    expect(focused).toMatchObject({ tag: 'BUTTON', name: 'Assembly', inHeader: true });
    expect(focused.outline).not.toBe('none');
    expect(focused.width).toBeGreaterThanOrEqual(2);
    await page.keyboard.press('Enter');
    expect(await sortOf()).toEqual(['Assembly: ascending']);
    expect(await firstAssembly()).toBe('AddinTool');
    await page.keyboard.press('Space');
    expect(await sortOf()).toEqual(['Assembly: descending']);
    expect(await firstAssembly()).toBe('ThirdParty.Json');
    // The focus stays on the button, and the mouse still sorts.
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).innerText.trim())).toBe('Assembly');
    await page.locator('#files thead th', { hasText: 'Version' }).click();
    expect(await sortOf()).toEqual(['Version: ascending']);
  }, 120_000);

  test.each([
    ['with errors', 'closed', 'light'],
    ['with errors', 'open', 'light'],
    ['with errors', 'open', 'dark'],
    ['without errors', 'closed', 'light'],
    ['without errors', 'open', 'light'],
    ['without errors', 'closed', 'dark'],
  ] as const)(
    'axe-core: no serious or critical violations (report %s, details %s, %s)',
    async (which, details, scheme) => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: scheme });
      await page.goto(which === 'with errors' ? url : cleanUrl);
      if (details === 'open') for (const button of await page.locator('#files button.more').all()) await button.click();
      expect(await page.locator('#files tbody tr.more:not([hidden])').count()).toBe(
        details === 'open' ? await page.locator('#files tbody tr.file').count() : 0,
      );
      const violations = await axeViolations(page);
      expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
    },
    120_000,
  );

  test('a file name with HTML-special and non-ASCII characters shows as written, in the table, the details and the filter', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(cleanUrl);
    const row = page.locator('#files tbody tr.file', { hasText: 'Ünïcødé' });
    expect(await row.count()).toBe(1);
    expect((await row.locator('td').nth(1).innerText()).replace(/\n/g, '')).toMatch(new RegExp(`/${regExpOf(ODD_NAME)}$`));
    expect(await page.locator('#files tbody i').count()).toBe(0); // <i> stayed text
    await row.locator('button.more').click();
    expect(await row.locator('button.more').getAttribute('aria-label')).toContain(ODD_NAME);
    expect(await page.locator('#files tbody tr.more:not([hidden]) dd').first().innerText()).toContain(ODD_NAME);
    await page.fill('#filter', '&amp;b <i>');
    expect(await page.locator('#shown').innerText()).toBe('1 of 6 files shown');
  }, 120_000);

  test('counts in words with one file and with none; an empty report says so and sorts without errors', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(oneUrl);
    expect(await page.locator('#shown').innerText()).toBe('1 of 1 file shown');
    expect(await page.locator('#load-summary').innerText()).toMatch(
      /^Will it load: of 1 API program, 0 load under the runtime license .*, 1 under the developer license/,
    );
    await page.locator('#files button.more').click();
    const details = await page.locator('#files tbody tr.more dl').innerText();
    expect(details).toMatch(/Size\s+5,?120 bytes/);
    // A .NET 8 file: the runtimes it runs on, and no .NET Framework row.
    expect(details).toContain('.NETCoreApp,Version=v8.0');
    expect(details).not.toContain('.NET Framework');
    await page.goto(emptyUrl);
    expect(await page.locator('#shown').innerText()).toBe('0 of 0 files shown');
    expect(await page.locator('#files tbody').innerText()).toContain('No files');
    await page.locator('#files thead th', { hasText: 'Assembly' }).click();
    expect(problems).toEqual([]);
    expect(await axeViolations(page).then((v) => v.filter((x) => x.impact === 'serious' || x.impact === 'critical'))).toEqual([]);
  }, 120_000);

  // The README's picture of the report: from the top down to one row's open details. Pixels differ between machines
  // (fonts, anti-aliasing), so the test does not compare them: the PNG carries the text it shows and a hash of the
  // page's style sheet (an iTXt chunk), and the test compares those with the report as it renders now.
  // SIGNGATE_UPDATE_SCREENSHOT=1 makes the picture again.
  test('docs/images/audit-report.png shows the report as it renders now', async () => {
    const png = join(repoRoot, 'docs', 'images', 'audit-report.png');
    const width = 1280;
    const page = await browser.newPage({ viewport: { width, height: 900 }, colorScheme: 'light', deviceScaleFactor: 1 });
    await page.goto(url);
    const row = page.locator('#files tbody tr.file', { hasText: 'SampleAddin.Helpers' });
    await row.locator('button.more').click();
    const last = `#${await row.getAttribute('data-more')}`;
    const css = await page.evaluate(() => document.querySelector('style')!.textContent!);
    const shows = `${width} px wide, light, down to the details of SampleAddin.Helpers.dll; style sheet sha256 ${createHash('sha256').update(css).digest('hex')}\n${await textDownTo(page, last)}`;
    if (process.env.SIGNGATE_UPDATE_SCREENSHOT === '1') {
      const bottom = await page.locator(last).evaluate((e) => e.getBoundingClientRect().bottom + window.scrollY);
      const shot = await page.screenshot({ fullPage: true, clip: { x: 0, y: 0, width, height: Math.ceil(bottom) + 24 } });
      writeFileAtomic(png, pngWithText(shot, 'signgate-shows', shows));
    }
    expect(
      pngFileText(png, 'signgate-shows'),
      'docs/images/audit-report.png does not show the report as it renders now: make it again with SIGNGATE_UPDATE_SCREENSHOT=1 npx vitest run test/audit/audit-html.test.ts (after npm run build), and commit it',
    ).toBe(shows);
  }, 120_000);
});

test('paths wrap after a separator or a dot before a name, never inside a version such as net8.0', async () => {
  const { breakablePath } = await import('../../src/report/audit-html.js');
  expect(breakablePath('bin/net8.0/MyAddin.Helpers.dll')).toBe('bin/<wbr>net8.0/<wbr>MyAddin.<wbr>Helpers.<wbr>dll');
  expect(breakablePath('bin\\Release\\v1.2.3\\A.dll')).toBe('bin\\<wbr>Release\\<wbr>v1.2.3\\<wbr>A.<wbr>dll');
});

describe('counts and load rows in words, in every audit format', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'signgate-audit-words-'));
    mkdirSync(join(dir, 'empty'));
  });

  test('one file: "1 file", "1 error", "1 API program", "1 loads"; the terminal line too', () => {
    const out = join(dir, 'one.md');
    const r = auditCli([fixturePath('sdk/bin/net8.0/SampleAddin.dll')], '--format', 'markdown', '-o', out);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/markdown audit written to .*one\.md: 1 file, 0 ok, 1 fail, 0 not required, 1 error\n/);
    const md = readFileSync(out, 'utf8');
    expect(md).toContain('**1 file**: 0 ok, 1 fail, 0 not required; 1 error, 0 warnings.');
    expect(md).toMatch(/Will it load: of 1 API program, 0 load under the runtime license .*, 1 under the developer license \(unsigned\), 0 under neither/);
    expect(md).toMatch(/SHA-256: `[0-9a-f]{64}`, 5120 bytes/);
    // A .NET 8 file runs on .NET only: no .NET Framework row.
    expect(md).toContain('- Target framework: .NETCoreApp,Version=v8.0');
    expect(md).not.toContain('.NET Framework:');
    // The same file built for .NET Framework 4.8 keeps its row.
    const framework = auditCli([fixturePath('sdk/bin/net48/SampleAddin.dll')], '--format', 'markdown').stdout;
    expect(framework).toContain('- .NET Framework: no: delay-signed: .NET Framework refuses it unless its key is registered for verification skipping');
    expect(framework).toMatch(/of 1 API program, 0 load under the runtime license .*; \.NET Framework refuses 1 as built\./);
    // verify-report speaks of the one file in the singular too.
    const json = join(dir, 'one.json');
    auditCli([fixturePath('sdk/bin/net8.0/SampleAddin.dll')], '--format', 'json', '-o', json);
    expect(runCli(['audit', '--verify-report', json, fixturePath('sdk/bin/net8.0/SampleAddin.dll')]).stdout).toContain(': 1 file, the same hashes');
  }, 120_000);

  test('no files (a report the library makes; the command refuses an empty release): "0 files", "0 errors", and "none"', async () => {
    const md = renderAudit(await buildAudit([], { settings: defaultSettings() }), 'markdown', null);
    expect(md).toContain('**0 files**: 0 ok, 0 fail, 0 not required; 0 errors, 0 warnings.');
    expect(md).toContain('By strong-name state: none.');
    expect(md).toContain('Will it load: the release has no API programs (files that use the vendor API).');
    const r = auditCli([join(dir, 'empty')], '-o', join(dir, 'empty.html'));
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('holds no .dll or .exe file');
  }, 120_000);

  test('many files: "9 files", "8 errors", and "1 warning"', () => {
    const r = auditCli([fixturePath('addin'), fixturePath('findings/vendor-attribute-false')], '--format', 'markdown');
    expect(r.stdout).toContain('**9 files**: 0 ok, 7 fail, 2 not required; 8 errors, 1 warning.');
    expect(r.stdout).toMatch(/Will it load: of [2-9] API programs, /);
  }, 120_000);

  test('Markdown: a file name that would start an HTML tag or an entity gets backslashes, so that it renders as written', () => {
    const release = join(dir, 'odd');
    mkdirSync(release);
    copyFileSync(fixturePath('addin/ThirdParty.Json.dll'), join(release, ODD_NAME));
    const md = auditCli([release], '--format', 'markdown').stdout;
    const shown = `a\\&amp;b \\<i>Ünïcødé "q" 'x' ✓.dll`;
    expect(md.split('\n').find((l) => l.startsWith('### '))).toMatch(new RegExp(`/${regExpOf(shown)}$`));
    expect(md).toMatch(new RegExp(`^\\| [^|]*/${regExpOf(shown)} \\| ThirdParty\\.Json \\|`, 'm'));
  }, 120_000);

  const load = (kind: 'framework' | 'core' | 'standard', refused: boolean): AuditLoad => ({
    target: {
      moniker: { framework: '.NETFramework,Version=v4.8', core: '.NETCoreApp,Version=v8.0', standard: '.NETStandard,Version=v2.0' }[kind],
      kind,
      source: 'attribute',
    },
    apiProgram: true,
    runtimeLicense: { loads: false, why: 'delay-signed, not signed by the service' },
    developerLicense: { loads: !refused, why: 'x' },
    netFramework: kind === 'core' ? null : refused ? { loads: false, why: 'delay-signed: .NET Framework refuses it' } : { loads: true, why: 'validly signed' },
    loadsUnder: refused ? 'neither' : 'developer',
  });

  test('load rows name the runtimes a file runs on: .NET Framework, .NET, or both for .NET Standard', () => {
    const labels = (l: AuditLoad) => loadDetails(l).map(([k]) => k);
    expect(labels(load('framework', true))).toEqual(['Target framework', 'Runtime license', 'Developer license', '.NET Framework']);
    expect(labels(load('core', false))).toEqual(['Target framework', 'Runtime license', 'Developer license']);
    expect(loadDetails(load('standard', true)).slice(3)).toEqual([
      ['.NET Framework', 'no: delay-signed: .NET Framework refuses it'],
      ['.NET (Core/5+)', 'yes as far as the strong name goes: .NET does not validate strong names'],
    ]);
  });
});

describe.skipIf(!hasChromium)('the Outcome column in headless Chromium', () => {
  let browser: Browser;
  let url: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-audit-outcome-'));
    const r = auditCli([fixturePath('addin')], '-o', join(dir, 'audit.html'));
    expect(r.stderr).toContain('html audit written to');
    url = pathToFileURL(join(dir, 'audit.html')).href;
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => browser?.close());

  test.each([1280, 1024, 390])('at %i px the Outcome column is in view, even when a row is wider than the box', async (width) => {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    await page.goto(url);
    /** Where the Outcome header and the first row's outcome are, against the table's box. */
    const where = () =>
      page.evaluate(() => {
        const box = document.querySelector('.table-wrap')!.getBoundingClientRect();
        const head = Array.from(document.querySelectorAll('#files thead th')).at(-1)!.getBoundingClientRect();
        const cell = document.querySelector('#files tr.file > td:last-child')!.getBoundingClientRect();
        const inside = (r: DOMRect) => r.width > 0 && r.left >= box.left - 0.5 && r.right <= box.right + 0.5;
        return { head: inside(head), cell: inside(cell), label: Array.from(document.querySelectorAll('#files thead th')).at(-1)!.textContent };
      });
    expect(await where()).toEqual({ head: true, cell: true, label: 'Outcome' });
    // A row with a long unbreakable value (a job id, a path without separators) makes the table wider than its box:
    // the table scrolls inside its box, and Outcome stays in view.
    await page.evaluate(() => {
      const cell = document.querySelector('#files tr.file > td:nth-child(2)')!;
      cell.textContent = `${cell.textContent}${'x'.repeat(300)}`;
      (cell as HTMLElement).style.whiteSpace = 'nowrap';
    });
    const wider = await page.evaluate(() => {
      const wrap = document.querySelector('.table-wrap')!;
      return wrap.scrollWidth > wrap.clientWidth;
    });
    expect(wider).toBe(true);
    expect(await where()).toEqual({ head: true, cell: true, label: 'Outcome' });
    await page.close();
  });
});
