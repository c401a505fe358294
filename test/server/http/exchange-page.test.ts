// The /exchange page in Debian's chromium (playwright-core, no browser download) against the real service on
// 127.0.0.1: sign in, choose the fixture archive, watch it, download the result and verify the files; a hostile
// archive dropped on the page shows its refusal. Nothing is fetched from anywhere but the service.
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readModule } from '../../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../../src/strongname/key-blob.js';
import { verifyStrongName } from '../../../src/strongname/strong-name.js';
import { readZip } from '../../../src/zip/read-zip.js';
import { sampleProjectArchive } from '../../helpers/archives.js';
import { hasChromium, launchChromium } from '../../helpers/browser.js';
import { WAIT_CEILING_MS } from '../../helpers/wait.js';
import { fixture } from '../../helpers/fixtures.js';
import { buildZip } from '../../helpers/hostile-zip.js';
import { startServer, type TestServer } from '../../helpers/server.js';

const key = parseStrongNameKeyFile(fixture('test-keys/12345_public.snk')).publicKey;

describe.skipIf(!hasChromium)('the /exchange page in headless Chromium', () => {
  let browser: Browser;
  let server: TestServer;
  let origin: string;
  beforeAll(async () => {
    server = await startServer();
    origin = new URL(server.baseUrl).origin;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A fresh page, signed in with the keyboard; collects console errors and every request's URL. */
  async function signedIn(): Promise<{ page: Page; problems: string[]; requests: string[] }> {
    const page = await browser.newPage({ acceptDownloads: true });
    const problems: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`${origin}/exchange`);
    await page.getByLabel('Access token').fill(server.token());
    await page.getByLabel('Access token').press('Enter');
    await expect.poll(() => page.locator('#who').innerText()).toMatch(/^Signed in\. License options: 12345(, \d+)*$/);
    return { page, problems, requests };
  }

  test('upload the fixture archive, watch each file, download the result: the files verify', async () => {
    const { page, problems, requests } = await signedIn();
    const { zip, entries } = await sampleProjectArchive();
    await page.getByLabel('Archive (.zip)').setInputFiles({ name: 'SampleAddin-1.4.2.zip', mimeType: 'application/zip', buffer: zip });
    expect(await page.locator('#chosen').innerText()).toBe(`Chosen: SampleAddin-1.4.2.zip (${zip.length} bytes)`);
    await page.getByLabel('Comment (optional)').fill('from the page');
    await page.getByRole('button', { name: 'Upload and sign' }).click();
    const link = page.getByRole('link', { name: 'Download SampleAddin-1.4.2-signed.zip' });
    await link.waitFor({ timeout: WAIT_CEILING_MS });
    expect(await page.locator('#phase').innerText()).toBe('Finished: 6 of 8 assemblies signed.');
    expect(await page.locator('#progress').getAttribute('value')).toBe('1');
    const row = (name: string) => page.locator('#files tbody tr', { has: page.locator('td', { hasText: new RegExp(`^${name.replace(/\./g, '\\.')}$`) }) });
    expect(await row('SampleAddin.dll').locator('td').nth(1).innerText()).toBe('Signed');
    expect(await row('ThirdParty.Json.dll').locator('td').nth(1).innerText()).toBe('Error');
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe('SampleAddin-1.4.2-signed.zip');
    const back = new Map((await readZip(readFileSync((await download.path())!))).map((e) => [e.name, e.bytes]));
    for (const name of [
      'SampleAddin.dll',
      'SampleAddin.Helpers.dll',
      'SampleAddin.XmlSerializers.dll',
      'Interop.SampleCom.dll',
      'AddinTool.exe',
      'de/SampleAddin.resources.dll',
    ]) {
      expect(verifyStrongName(readModule(back.get(name)!), { expectedKey: key }).valid, name).toBe(true);
    }
    for (const e of entries) expect(back.has(e.name) && back.has(`signing-logs/${e.name}.log`), e.name).toBe(true);
    expect(back.get('signing-log.txt')!.toString()).toContain('(from the page)');
    expect(problems, problems.join('\n')).toEqual([]);
    expect(requests.every((u) => u.startsWith(`${origin}/`) || u.startsWith('blob:'))).toBe(true);
    await page.close();
  });

  test('a hostile archive dropped on the page shows its refusal', async () => {
    const { page } = await signedIn();
    const hostile = buildZip([
      { name: 'SampleAddin.dll', data: fixture('addin/SampleAddin.dll') },
      { name: '../../evil.dll', data: Buffer.from('MZ') },
    ]);
    const dataTransfer = await page.evaluateHandle(
      (bytes) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(bytes)], 'hostile.zip', { type: 'application/zip' }));
        return transfer;
      },
      [...hostile],
    );
    await page.locator('#drop').dispatchEvent('drop', { dataTransfer });
    expect(await page.locator('#chosen').innerText()).toBe(`Chosen: hostile.zip (${hostile.length} bytes)`);
    await page.getByRole('button', { name: 'Upload and sign' }).click();
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.innerText(), { timeout: WAIT_CEILING_MS }).toContain('Unsafe archive: hostile.zip:');
    expect(await alert.innerText()).toContain('../../evil.dll');
    expect(await page.locator('#phase').innerText()).toBe('Refused.');
    expect(await page.getByRole('link').count()).toBe(0);
    await page.close();
  });

  test('a wrong token is refused on the page, and the upload stays disabled', async () => {
    const page = await browser.newPage();
    await page.goto(`${origin}/exchange`);
    await page.getByLabel('Access token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('Unauthorized: The access token is not known.');
    expect(await page.getByRole('button', { name: 'Upload and sign' }).isDisabled()).toBe(true);
    await page.close();
  });
});
