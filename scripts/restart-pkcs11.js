#!/usr/bin/env node
// Restarts under load with a key in a PKCS#11 token (SoftHSM2): starts `signgate serve` with fresh signing threads,
// uploads a burst of one-file jobs at once, waits for all of them, stops the process (SIGKILL), again and again;
// counts the files signed and every failure by its message, and the C_Initialize and C_Login calls of each process
// (through OpenSC's pkcs11-spy, when present). Needs `npm run build`, softhsm2, opensc and the pkcs11js binding; the
// token lives in a temporary folder (SOFTHSM2_CONF points there), never in the system's token folder.
//   node scripts/restart-pkcs11.js [--restarts 100] [--jobs 16] [--workers 8]
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SOFTHSM_MODULE as MODULE, softHsmToken } from './softhsm-token.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const SPY = '/usr/lib/x86_64-linux-gnu/pkcs11/pkcs11-spy.so';
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const restarts = Number(arg('restarts', '100'));
const jobs = Number(arg('jobs', '16'));
const workers = Number(arg('workers', '8'));
const bits = 1024; // the size of the sample add-in's key, which the token's key takes the place of
const CLI = join(repoRoot, 'bin', 'signgate.js');

const { dir, uri: keyUri } = softHsmToken('restart', bits);

const { openPkcs11Key } = await import('../dist/reader-api.js');
const { readModule } = await import('../dist/strongname/well-formed.js');
const spied = existsSync(SPY);
const uri = keyUri(spied ? SPY : MODULE);
const key = openPkcs11Key(keyUri());
writeFileSync(join(dir, 'option_public.snk'), key.publicKey.blob);
const config = join(dir, 'server.json');
writeFileSync(
  config,
  JSON.stringify({
    vendor: 'Contoso',
    organizations: [{ id: 'sandbox', licenses: [{ optionId: 4711, keyPair: uri, publicKey: 'option_public.snk' }], users: [{ id: 'ci', roles: ['User'] }] }],
  }),
);
const dataDir = join(dir, 'data');
const token = execFileSync(process.execPath, [CLI, 'serve', 'token', 'create', '--config', config, '--data-dir', dataDir, '--org', 'sandbox', '--user', 'ci'], {
  encoding: 'utf8',
}).trim();
// The sample add-in (delay-signed for a 1024-bit test key, with the vendor's attribute) carrying the token's key
// instead: delay-signed for it, and the service's check passes it.
const delaySigned = Buffer.from(readFileSync(join(repoRoot, 'fixtures', 'addin', 'SampleAddin.dll')));
const oldKey = readModule(delaySigned).assembly.publicKey;
delaySigned.set(key.publicKey.blob, delaySigned.indexOf(Buffer.from(oldKey)));

function start(spyLog) {
  const child = spawn(process.execPath, [CLI, 'serve', '--config', config, '--data-dir', dataDir, '--port', '0', '--signing-workers', String(workers)], {
    env: { ...process.env, PKCS11SPY: MODULE, PKCS11SPY_OUTPUT: spyLog },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let log = '';
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const port = new Promise((resolve, reject) => {
    // The start line is a line of the service's JSON log, on stdout.
    child.stdout.on('data', (d) => {
      log += d;
      const m = /(?:API|worker, health) at http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m) resolve(Number(m[1]));
    });
    void exited.then((code) => reject(new Error(`serve ended (${code}): ${log.slice(-2000)}`)));
  });
  return { child, port, exited };
}

async function burst(base) {
  const headers = { authorization: `Bearer ${token}` };
  const ids = await Promise.all(
    Array.from({ length: jobs }, async () => {
      const form = new FormData();
      form.append('files', new Blob([delaySigned]), 'SampleAddin.dll');
      const r = await fetch(`${base}/assemblies`, { method: 'POST', headers, body: form });
      if (r.status !== 201) throw new Error(`upload answered ${r.status}: ${await r.text()}`);
      return (await r.json()).id;
    }),
  );
  const files = [];
  for (const id of ids) {
    for (;;) {
      const status = await (await fetch(`${base}/assemblies/${id}/status`, { headers })).json();
      if (status.processingFinished) {
        files.push(...status.assemblies);
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return files;
}

const count = (log, name) => log.match(new RegExp(`^\\d+: ${name}$`, 'gm'))?.length ?? 0;
let signed = 0;
let total = 0;
const failures = new Map();
const logins = new Map();
const inits = new Map();
const started = Date.now();
for (let i = 0; i < restarts; i++) {
  const spyLog = join(dir, `spy-${i}.log`);
  const service = start(spyLog);
  try {
    const base = `http://127.0.0.1:${await service.port}/assembly-signing/v1.0`;
    for (const f of await burst(base)) {
      total++;
      if (f.fileProcessingState === 'Signed') signed++;
      else {
        const text = f.messages.map((m) => m.message).join(' ');
        failures.set(text, (failures.get(text) ?? 0) + 1);
      }
    }
  } finally {
    service.child.kill('SIGKILL');
    await service.exited;
  }
  if (spied) {
    const log = existsSync(spyLog) ? readFileSync(spyLog, 'utf8') : '';
    rmSync(spyLog, { force: true }); // it holds the PIN as the module was given it
    logins.set(count(log, 'C_Login'), (logins.get(count(log, 'C_Login')) ?? 0) + 1);
    inits.set(count(log, 'C_Initialize'), (inits.get(count(log, 'C_Initialize')) ?? 0) + 1);
  }
  process.stderr.write(`\r${i + 1}/${restarts} restarts, ${signed}/${total} files signed`);
}
process.stderr.write('\n');
const histogram = (m) =>
  [...m]
    .sort((a, b) => a[0] - b[0])
    .map(([calls, processes]) => `${calls} call(s): ${processes} process(es)`)
    .join(', ');
console.log(
  `${restarts} restarts of signgate serve with ${workers} signing threads, a burst of ${jobs} one-file jobs each (${bits}-bit key in SoftHSM2), ${((Date.now() - started) / 1000).toFixed(0)} s:`,
);
console.log(`  files signed: ${signed} of ${total}`);
for (const [text, n] of failures) console.log(`  failed ${n}x: ${text}`);
if (spied) {
  console.log(`  C_Initialize per process: ${histogram(inits)}`);
  console.log(`  C_Login per process:      ${histogram(logins)}`);
}
process.exitCode = signed === total ? 0 : 1;
