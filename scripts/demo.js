// `npm start`: the main job on embedded defaults, with no network and nothing outside the repository.
// It runs the pre-flight check over the sample add-ins in fixtures/addin, signs the files that need it with
// the sandbox test key (as the signing service would), verifies the results and shows that only the
// signature changed.
// (The story grows with `check`, `serve`, `sign` and `audit`.)
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../dist/cli/main.js';
import { compareIgnoringSignature, parseStrongNameKeyFile, publicKeyToken, readModule, signAssembly, verifyStrongName } from '../dist/index.js';
import { runCheck } from '../dist/rules/runner.js';
import { writeFileAtomic } from '../dist/cli/files.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const addinDir = 'fixtures/addin';
const outDir = 'out/demo/signed';
const keyPair = parseStrongNameKeyFile(readFileSync('fixtures/test-keys/12345_keypair.snk'));

const say = (text) => process.stdout.write(`${text}\n`);
say('== 1. Pre-flight check of the sample add-in folder (vendor "Contoso", option 12345) ==\n');
const checkCode = await main(['check', addinDir, '--vendor', 'Contoso', '--key', 'fixtures/test-keys/12345_public.snk']);
if (checkCode !== 0) {
  say('The pre-flight check found errors; nothing is signed.');
  process.exit(checkCode);
}

say('\n== 2. Sign the files that need it with the sandbox key of option 12345 (TEST KEY) ==\n');
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (/\.(dll|exe)$/i.test(name)) files.push(path);
  }
};
walk(addinDir);
const check = runCheck(
  files.map((f) => ({ path: f, uploadName: relative(addinDir, f), bytes: readFileSync(f), explicit: false })),
  { settings: { vendor: 'Contoso', vendorApi: ['Contoso.*'], vendorNamespace: 'Contoso', keys: [{ optionId: 12345, source: '12345_public.snk', publicKey: keyPair.publicKey, token: publicKeyToken(keyPair.publicKey.blob) }], maxUploadBytes: 40_000_000, root: null } },
);
let failures = 0;
const signedPaths = [];
for (const file of check.uploadSet.files) {
  const module = readModule(readFileSync(file));
  const shown = relative(root, file).split('\\').join('/');
  const signed = signAssembly(module, keyPair);
  const target = join(outDir, relative(addinDir, file));
  mkdirSync(dirname(target), { recursive: true });
  writeFileAtomic(target, signed);
  const diff = compareIgnoringSignature(module, signed);
  const ok = verifyStrongName(readModule(signed), { expectedKey: keyPair.publicKey }).valid && diff.onlySignatureDiffers;
  if (!ok) failures++;
  signedPaths.push(target);
  say(`  ${ok ? 'ok   ' : 'FAIL '} ${shown} -> ${target.split('\\').join('/')} (only signature, flag and checksum changed: ${diff.onlySignatureDiffers})`);
}

say('\n== 3. Verify the signed files against the public key file 12345_public.snk ==\n');
const code = await main(['verify', ...signedPaths, '--key', 'fixtures/test-keys/12345_public.snk']);
say(`\nSigned files are in ${outDir}/. Try: node bin/signgate.js inspect ${outDir}`);
process.exitCode = failures === 0 ? code : 1;
