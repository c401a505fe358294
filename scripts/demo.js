// `npm start`: the whole story on embedded defaults, with no network beyond this machine.
// 1. start the reference signing service in-process on 127.0.0.1 with a sandbox organization and TEST keys;
// 2. pre-flight check of the sample add-ins in fixtures/addin, with the licenses from the service;
// 3. sign them through the client (upload, wait, download, extract, verify);
// 4. verify the signed files against the option's public key;
// 5. write the release audit (HTML, Markdown, JSON) and its SBOM (CycloneDX); 6. say where everything is.
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../dist/cli/main.js';
import { buildServer } from '../dist/server/http/app.js';
import { watchServerConfigFile } from '../dist/server/server-config.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const out = 'out/demo';
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// Keep the demo's job ledger with the demo, not in the user's cache folder.
process.env.SIGNGATE_CACHE_DIR = join(root, out, 'cache');
const KEY = 'fixtures/test-keys/12345_public.snk';
// What runs signgate in a clone (no global install puts `signgate` on PATH): npx finds this package's own bin.
const CLI = 'npx signgate';
const SERVICE = `--config fixtures/server/sandbox.json --data-dir ${out}/service-data`;
const say = (text) => process.stdout.write(`${text}\n`);
const codes = [];
const step = async (title, argv) => {
  // Quoted as a shell needs it, so that the line can be copied and run.
  const shown = argv.map((a) => (/^[\w@%+=:,./\\-]+$/.test(a) ? a : `"${a.replace(/(["\\$`])/g, '\\$1')}"`));
  say(`\n== ${title} ==\n$ ${CLI} ${shown.join(' ')}\n`);
  const code = await main(argv);
  codes.push(code);
  return code;
};

const app = await buildServer({ config: watchServerConfigFile('fixtures/server/sandbox.json').current, dataDir: join(out, 'service-data'), logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${app.server.address().port}${app.signgate.apiPrefix}`;
// A token for the sandbox user; it lives only in this process's environment and is never printed.
process.env.SIGNGATE_ACCESS_TOKEN = app.signgate.tokens.create('sandbox', 'ci', 1).token;
say(`== 1. Reference signing service (sandbox organization, TEST keys) ==\n\nAPI  ${base}\ndocs ${base.replace(app.signgate.apiPrefix, '/docs')}`);

try {
  const checked = await step('2. Pre-flight check of the sample add-ins, with the licenses from the service', [
    'check',
    'fixtures/addin',
    '--vendor',
    'Contoso',
    '--key',
    KEY,
    '--base-url',
    base,
  ]);
  if (checked === 0) {
    await step('3. Sign through the client: upload, wait, download, extract, verify', [
      'sign',
      'fixtures/addin',
      '--root',
      'fixtures/addin',
      '--vendor',
      'Contoso',
      '--key',
      KEY,
      '--base-url',
      base,
      '--destination-path',
      `${out}/signed`,
      '--comment',
      'npm start',
      '--poll-interval',
      '100',
      '--delete-afterwards',
    ]);
    await step('4. Verify the signed files against 12345_public.snk', ['verify', `${out}/signed`, '--key', KEY]);
    await step('5. Release audit', ['audit', `${out}/signed`, '--key', KEY, '--vendor', 'Contoso', '-o', `${out}/audit.html`]);
    await main(['audit', `${out}/signed`, '--key', KEY, '--vendor', 'Contoso', '--format', 'markdown', '-o', `${out}/audit.md`]);
    // The JSON audit and, from the same evidence, the release's CycloneDX SBOM (BSI TR-03183-2 v2.1: docs/audit.md).
    await main([
      'audit',
      `${out}/signed`,
      '--key',
      KEY,
      '--vendor',
      'Contoso',
      '--format',
      'json',
      '-o',
      `${out}/audit.json`,
      '--sbom',
      `${out}/release.cdx.json`,
      '--sbom-creator-url',
      'https://contoso.example',
      '--sbom-license',
      'LicenseRef-Contoso-EULA',
      '--sbom-source-uri',
      'https://git.contoso.example/sample-addin',
      '--sbom-download-uri',
      'https://downloads.contoso.example/sample-addin/1.4.2.zip',
    ]);
  }
} finally {
  await app.close();
}

const ok = codes.every((c) => c === 0);
say(`\n== 6. Where everything is ==\n
signed files     ${out}/signed/
audit report     ${out}/audit.html (also audit.md, audit.json)
SBOM             ${out}/release.cdx.json (CycloneDX 1.6)
job ledger       ${out}/cache/jobs.json
service data     ${out}/service-data/ (the service stopped; from this folder, run it again with
                   ${CLI} serve ${SERVICE}
                 and make a token for it with
                   ${CLI} serve token create ${SERVICE} --org sandbox --user ci
                 (node bin/signgate.js works in place of ${CLI}))
\n${ok ? 'Every step succeeded.' : 'A step failed: see above.'}`);
process.exitCode = ok ? 0 : 1;
