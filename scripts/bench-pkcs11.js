#!/usr/bin/env node
// Signing throughput with a key in a PKCS#11 token (SoftHSM2) beside the same-size key in process:
//   - signatures/s in one thread, one after the other (the command line's path: signWithPkcs11 at once);
//   - files/s through the service's signing pool with 1 and 8 threads (and --threads): each thread hashes its file and
//     hands the DigestInfo to the service's thread, the module's one owner, which signs in libuv's threads; the signature
//     is checked and the package entry prepared in the pool thread, as the service does.
// Needs `npm run build`, softhsm2, opensc (pkcs11-tool) and the pkcs11js binding; the token lives in a temporary
// folder (SOFTHSM2_CONF points there), never in the system's token folder.
//   node scripts/bench-pkcs11.js [--runs 400] [--bits 2048] [--threads 1,8] [--file <an assembly without a strong name>]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { softHsmToken } from './softhsm-token.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const runs = Number(arg('runs', '400'));
const bits = Number(arg('bits', '2048'));
const threadCounts = arg('threads', '1,8').split(',').map(Number);
const file = arg('file', join(repoRoot, 'fixtures', 'assemblies', 'unsigned.dll'));

// The token first: SoftHSM reads SOFTHSM2_CONF when the module is initialized.
const { uri } = softHsmToken('bench', bits);

const { openPkcs11Key, createStrongNameKeyPair, parseStrongNameKeyFile } = await import('../dist/reader-api.js');
const { signWithPkcs11 } = await import('../dist/strongname/pkcs11/signer.js');
const { strongNameAssembly } = await import('../dist/strongname/strong-name-writer.js');
const { SigningPool } = await import('../dist/server/jobs/signing-pool.js');

const inToken = openPkcs11Key(uri());
const inProcess = parseStrongNameKeyFile(createStrongNameKeyPair(bits));
const input = readFileSync(file);

function oneThread() {
  const chunk = [Buffer.alloc(64, 1)];
  for (let i = 0; i < 10; i++) signWithPkcs11(inToken.pkcs11, chunk, 'sha1'); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) signWithPkcs11(inToken.pkcs11, chunk, 'sha1');
  return runs / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function pool(key, threads) {
  const delaySigned = strongNameAssembly(input, { key, delaySign: true, force: true }).bytes;
  const signer = new SigningPool(threads);
  try {
    await Promise.all(Array.from({ length: threads * 2 }, () => signer.sign(delaySigned.slice(), key))); // warm-up
    const start = process.hrtime.bigint();
    const results = await Promise.all(Array.from({ length: runs }, () => signer.sign(delaySigned.slice(), key)));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (results.some((r) => !r)) throw new Error('a signature did not verify');
    return runs / seconds;
  } finally {
    await signer.close();
  }
}

console.log(`${bits}-bit RSA, ${runs} signatures each (${input.length}-byte file through the pool):`);
console.log(`  PKCS#11 (SoftHSM2), one thread at once:  ${oneThread().toFixed(0)} signatures/s`);
for (const threads of threadCounts) {
  const token = await pool(inToken, threads);
  const local = await pool(inProcess, threads);
  console.log(`  pool of ${String(threads).padStart(2)} thread(s): PKCS#11 ${token.toFixed(0)} files/s, in-process key ${local.toFixed(0)} files/s`);
}
