// The documentation page's Authorize button with the authorization-code flow and PKCE, in Debian's chromium,
// against a real OpenID Connect provider (oidc-provider) on 127.0.0.1: sign in, authorize, run GET /licenses.
import { createServer } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sampleProjectArchive } from '../../helpers/archives.js';
import { hasChromium, launchChromium, tryLicenses } from '../../helpers/browser.js';
import { WAIT_CEILING_MS } from '../../helpers/wait.js';
import { AUDIENCE, startIssuer, type TestIssuer } from '../../helpers/oidc-provider.js';
import { sandboxConfig, startServer, type TestServer } from '../../helpers/server.js';

/** A port free now, so that the issuer can know the documentation page's redirect URI before the service starts. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

describe.skipIf(!hasChromium)('Authorize on /docs with an OpenID Connect issuer', () => {
  let browser: Browser;
  let issuer: TestIssuer;
  let server: TestServer;
  let origin: string;
  beforeAll(async () => {
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    issuer = await startIssuer([`${origin}/docs/static/oauth2-redirect.html`, `${origin}/exchange`]);
    server = await startServer({
      port,
      config: sandboxConfig((c) => (c.oidc = { issuer: issuer.issuer, audience: AUDIENCE, clientId: 'docs', scopes: ['openid', 'sign'] })),
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await issuer?.close();
  });

  test('the OpenAPI document offers the authorization-code flow at the issuer', async () => {
    const doc = await (await fetch(`${server.baseUrl}/openapi.json`)).json();
    expect(doc.components.securitySchemes.oauth2.flows.authorizationCode).toEqual({
      authorizationUrl: `${issuer.issuer}/auth`,
      tokenUrl: `${issuer.issuer}/token`,
      scopes: { openid: 'openid', sign: 'sign' },
    });
  });

  test('sign in at the issuer, authorize, run GET /licenses and see the optionIds', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const tokenRequests: string[] = [];
    const apiAuthorizations: string[] = [];
    page.on('request', (r) => r.url().endsWith('/licenses') && apiAuthorizations.push(r.headers().authorization ?? ''));
    page.on('request', (r) => r.url() === `${issuer.issuer}/token` && r.method() === 'POST' && tokenRequests.push(r.postData() ?? ''));
    await page.goto(`${origin}/docs/`, { waitUntil: 'networkidle' });
    await page.locator('button.authorize').first().click();
    const oauth = page.locator('.modal-ux .auth-container', { hasText: 'authorizationCode' });
    await oauth.waitFor();
    const [popup] = await Promise.all([page.waitForEvent('popup'), oauth.locator('button.authorize').click()]);
    await popup.locator('input[name=login]').fill('alice');
    await popup.locator('input[name=password]').fill('any password');
    await popup.locator('button[type=submit]').click();
    // Authorize: the provider's consent page lists the scope asked for.
    await popup
      .locator('li', { hasText: /^sign$/ })
      .first()
      .waitFor();
    await popup.getByRole('button', { name: 'Continue' }).click();
    // The redirect page hands the code back to the docs page, which redeems it with the PKCE verifier.
    await oauth.locator('button', { hasText: 'Logout' }).waitFor({ timeout: WAIT_CEILING_MS });
    expect(await oauth.innerText()).toContain('Authorized');
    expect(tokenRequests).toHaveLength(1);
    expect(tokenRequests[0]).toMatch(/(^|&)code_verifier=[A-Za-z0-9._~-]{43,}(&|$)/);
    expect(tokenRequests[0]).toContain('grant_type=authorization_code');
    await page.locator('.modal-ux button.btn-done').first().click();

    const { status, body } = await tryLicenses(page);
    expect(JSON.parse(body).map((l: { optionId: number }) => l.optionId)).toContain(12345);
    expect(status).toBe('200');
    // The request carried the access token from the issuer: a JWT, not a personal access token.
    expect(apiAuthorizations).toHaveLength(1);
    expect(apiAuthorizations[0]).toMatch(/^Bearer [A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    await page.close();
  });

  test('/exchange: sign in at the issuer (authorization code with PKCE), then upload an archive with that token', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${origin}/exchange`);
    await page.getByRole('button', { name: `Sign in at ${new URL(issuer.issuer).host}` }).click();
    await page.locator('input[name=login]').fill('alice');
    await page.locator('input[name=password]').fill('any password');
    await page.locator('button[type=submit]').click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect
      .poll(() => page.locator('#who').innerText(), { timeout: WAIT_CEILING_MS })
      .toMatch(new RegExp(`^Signed in at ${issuer.issuer.replace(/[.]/g, '\\.')}\\. License options: 12345`));
    // The code and state are gone from the address bar.
    expect(page.url()).toBe(`${origin}/exchange`);
    const { zip } = await sampleProjectArchive();
    await page.getByLabel('Archive (.zip)').setInputFiles({ name: 'project.zip', mimeType: 'application/zip', buffer: zip });
    await page.getByRole('button', { name: 'Upload and sign' }).click();
    await page.getByRole('link', { name: 'Download project-signed.zip' }).waitFor({ timeout: WAIT_CEILING_MS });
    expect(await page.locator('#phase').innerText()).toBe('Finished: 6 of 8 assemblies signed.');
    expect(problems).toEqual([]);
    await page.close();
  });
});
