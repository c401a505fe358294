#!/usr/bin/env node
// Signing time per file with a key in a PKCS#11 token (SoftHSM2) beside the same-size key in process: the median of
// many signAssembly calls on one delay-signed file each (hashing included; the signature check after it is not).
// Needs `npm run build`, softhsm2, opensc (pkcs11-tool) and the pkcs11js binding; the token lives in a temporary
// folder (SOFTHSM2_CONF points there), never in the system's token folder.
//   node scripts/bench-pkcs11.js [--runs 200] [--bits 2048] [--file <an assembly without a strong name>]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const MODULE = process.env.SIGNGATE_PKCS11_MODULE || '/usr/lib/softhsm/libsofthsm2.so';
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const runs = Number(arg('runs', '200'));
const bits = Number(arg('bits', '2048'));
const file = arg('file', join(repoRoot, 'fixtures', 'assemblies', 'unsigned.dll'));

// The token first: SoftHSM reads SOFTHSM2_CONF when the module is initialized.
const dir = mkdtempSync(join(tmpdir(), 'signgate-bench-pkcs11-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'softhsm2.conf'), `directories.tokendir = ${dir}\nobjectstore.backend = file\nlog.level = ERROR\n`);
process.env.SOFTHSM2_CONF = join(dir, 'softhsm2.conf');
const pin = '1234-bench';
writeFileSync(join(dir, 'pin'), `${pin}\n`, { mode: 0o600 });
execFileSync('softhsm2-util', ['--init-token', '--free', '--label', 'bench', '--so-pin', '87654321', '--pin', pin], { stdio: 'ignore' });
execFileSync('pkcs11-tool', ['--module', MODULE, '--token-label', 'bench', '--login', '--pin', pin, '--keypairgen', '--key-type', `rsa:${bits}`, '--label', 'bench-key', '--id', '01'], { stdio: 'ignore' });

const { openPkcs11Key, signerOptions, createStrongNameKeyPair, parseStrongNameKeyFile } = await import('../dist/index.js');
const { signAssembly } = await import('../dist/strongname/strong-name.js');
const { strongNameAssembly } = await import('../dist/strongname/strong-name-writer.js');
const { readModule } = await import('../dist/strongname/assembly-info.js');

const inToken = openPkcs11Key(`pkcs11:token=bench;object=bench-key?module-path=${MODULE}&pin-source=file:${join(dir, 'pin')}`);
const inProcess = parseStrongNameKeyFile(createStrongNameKeyPair(bits));
const input = readFileSync(file);

function median(key) {
  const delaySigned = strongNameAssembly(input, { key, delaySign: true, force: true }).bytes;
  const module = readModule(delaySigned);
  const options = signerOptions(key);
  for (let i = 0; i < 10; i++) signAssembly(module, key, options); // warm-up (and the token's session opened)
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    signAssembly(module, key, options);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const token = median(inToken);
const local = median(inProcess);
console.log(`signing one file (${input.length} bytes, ${bits}-bit RSA, median of ${runs}):`);
console.log(`  PKCS#11 (SoftHSM2)  ${token.toFixed(3)} ms`);
console.log(`  in-process key      ${local.toFixed(3)} ms`);
