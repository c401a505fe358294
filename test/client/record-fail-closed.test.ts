// The signature record check fails closed: a lying proxy in front of the real service on loopback leaves out the
// record, empties its entries, changes a returned file outside what the strong-name signature covers, or answers
// under another spelling of the service's URL. Each is refused with SG_ERR_RECORD_PROOF, nothing written to the
// destination, the pin and the saved checkpoint kept. A service that never showed a record stays usable and says so;
// a record key given up front (--record-key) is the only one accepted from the first contact on.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dataDirOnly } from '../helpers/database.js';
import { fixturePath, runCliAsync } from '../helpers/fixtures.js';
import { startLyingProxy, type Lie, type Proxy } from '../helpers/proxy.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { formatVerifierKey, verifierOf } from '../../src/record/checkpoint.js';
import { recordIdentity } from '../../src/workflows/ledger.js';

const KEY = fixturePath('test-keys/12345_public.snk');
const ADDIN = fixturePath('addin/SampleAddin.dll');
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

let server: TestServer;
let work: string;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'signgate-record-closed-'));
  cleanups.push(() => rmSync(work, { recursive: true, force: true }));
  server = await startServer({ dataDir: join(work, 'data') });
  cleanups.push(() => server.close());
});

/** A proxy in front of the service whose status and download answers pass through the lie of the moment. */
async function lyingProxy(): Promise<Proxy & { lie: (l: Lie) => void }> {
  const proxy = await startLyingProxy(server.baseUrl);
  cleanups.push(() => proxy.close());
  return proxy;
}

/** A status lie: edits the parsed status of a finished job. */
const statusLie =
  (edit: (status: Record<string, unknown>) => void): Lie =>
  (path, body) => {
    if (!path.endsWith('/status')) return body;
    const status = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    if (status.processingFinished) edit(status);
    return Buffer.from(JSON.stringify(status));
  };

/** A download lie: each DLL of the result package with its PE CheckSum field changed (outside what the signature covers). */
const checksumLie: Lie = (path, body) => {
  if (path.endsWith('/status')) return body;
  const files = unzipSync(body);
  for (const [name, bytes] of Object.entries(files)) {
    if (!/\.dll$/i.test(name)) continue;
    const checksumAt = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0x3c, true) + 24 + 64;
    bytes[checksumAt] = bytes[checksumAt]! ^ 0x5a;
  }
  return Buffer.from(zipSync(files));
};

function client(name: string) {
  const dir = join(work, name);
  const env = { SIGNGATE_ACCESS_TOKEN: server.token(), SIGNGATE_CACHE_DIR: join(dir, 'cache') };
  const ledger = join(dir, 'cache', 'jobs.json');
  const pins = () =>
    existsSync(ledger) ? ((JSON.parse(readFileSync(ledger, 'utf8')) as { recordCheckpoints?: Record<string, Pin> }).recordCheckpoints ?? {}) : {};
  let n = 0;
  const sign = async (baseUrl: string, ...extra: string[]) => {
    const out = join(dir, `out${++n}`);
    const r = await runCliAsync(
      ['sign', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--base-url', baseUrl, '--destination-path', out, '--poll-interval', '20', ...extra],
      { env },
    );
    return { ...r, out, written: existsSync(out) ? readdirSync(out) : [] };
  };
  const jobs = (...args: string[]) => runCliAsync(['jobs', ...args], { env });
  return { dir, env, ledger, pins, sign, jobs };
}

interface Pin {
  size: number;
  publicKey: string;
  root: string;
  savedAt: string;
}

const recordKeyText = () => readFileSync(join(server.dataDir, 'record-key.pub'), 'utf8').trim();
const identity = (p: Proxy) => p.baseUrl.replace(/\/+$/, '');

/** Expects a refusal by the record check with nothing written and the pin as it was. */
function expectRefused(
  r: { status: number | null; stderr: string; written: string[] },
  pinBefore: Pin | undefined,
  pinNow: Pin | undefined,
  ...words: string[]
) {
  expect(r.status, r.stderr).toBe(3);
  expect(r.stderr).toContain('SG_ERR_RECORD_PROOF');
  for (const w of words) expect(r.stderr).toContain(w);
  expect(r.stderr).toContain('nothing of job');
  expect(r.written).toEqual([]);
  expect(pinNow).toEqual(pinBefore);
}

describe('a service that showed a record once', () => {
  dataDirOnly('leaves the record part out: refused, nothing written, the pin and checkpoint kept', async () => {
    const proxy = await lyingProxy();
    const c = client('omit');
    const first = await c.sign(proxy.baseUrl);
    expect(first.status, first.stderr).toBe(0);
    const pin = c.pins()[identity(proxy)];
    expect(pin?.publicKey).toBe(recordKeyText());
    proxy.lie(statusLie((s) => delete s.signatureRecord));
    const r = await c.sign(proxy.baseUrl);
    expectRefused(r, pin, c.pins()[identity(proxy)], 'carries no signature record, but this service showed one', 'signgate jobs unpin-record');
  });

  dataDirOnly('gives a genuine checkpoint with no entries: the signed file has none, refused', async () => {
    const proxy = await lyingProxy();
    const c = client('empty');
    expect((await c.sign(proxy.baseUrl)).status).toBe(0);
    const pin = c.pins()[identity(proxy)];
    proxy.lie(statusLie((s) => ((s.signatureRecord as { entries: unknown[] }).entries = [])));
    const r = await c.sign(proxy.baseUrl);
    expectRefused(r, pin, c.pins()[identity(proxy)], 'SampleAddin.dll came back changed', 'has no entry for it');
  });

  dataDirOnly("returns a file whose PE CheckSum was changed: its SHA-256 is not the entry's signedSha256, refused", async () => {
    const proxy = await lyingProxy();
    const c = client('checksum');
    expect((await c.sign(proxy.baseUrl)).status).toBe(0);
    const pin = c.pins()[identity(proxy)];
    proxy.lie(checksumLie);
    const r = await c.sign(proxy.baseUrl);
    expectRefused(r, pin, c.pins()[identity(proxy)], 'SampleAddin.dll came back with SHA-256', 'says the service signed it as');
  });

  dataDirOnly('another spelling of the URL (trailing slash, upper-case scheme) shares the pin: a status without a record is refused there too', async () => {
    const proxy = await lyingProxy();
    const c = client('spelling');
    expect((await c.sign(proxy.baseUrl)).status).toBe(0);
    const pin = c.pins()[identity(proxy)];
    proxy.lie(statusLie((s) => delete s.signatureRecord));
    const other = `${proxy.baseUrl.replace(/^http:/, 'HTTP:')}/`;
    const r = await c.sign(other);
    expectRefused(r, pin, c.pins()[identity(proxy)], 'carries no signature record, but this service showed one');
    expect(Object.keys(c.pins())).toEqual([identity(proxy)]);
  });
});

describe('first contact', () => {
  dataDirOnly('says that the key is now pinned on first use and names it; the second run says it was checked against the pin', async () => {
    const c = client('first');
    const first = await c.sign(server.baseUrl);
    expect(first.status, first.stderr).toBe(0);
    const name = recordKeyText().split('+').slice(0, 2).join('+');
    expect(first.stderr).toContain(`first contact: the record key ${name} is now pinned on first use for ${server.baseUrl}`);
    expect(first.stderr).not.toContain('seen before');
    const second = await c.sign(server.baseUrl);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).toContain(`signed by the record key ${name} pinned on ${c.pins()[server.baseUrl]!.savedAt.slice(0, 4)}`);
  });

  dataDirOnly(
    '--record-key: the right key (file or text) passes; another key, or a status without a record, is refused from the first contact on',
    async () => {
      const keyFile = join(server.dataDir, 'record-key.pub');
      const right = client('expected-right');
      const ok = await right.sign(server.baseUrl, '--record-key', keyFile);
      expect(ok.status, ok.stderr).toBe(0);
      expect(ok.stderr).toContain('that --record-key names');
      expect((await right.sign(server.baseUrl, '--record-key', recordKeyText())).status).toBe(0);

      // A key of another deployment: its text is a valid record key, but not this service's.
      const other = client('expected-other');
      const foreign = verifierOf(generateKeyPairSync('ed25519').privateKey);
      const wrong = await other.sign(server.baseUrl, '--record-key', formatVerifierKey(foreign));
      expectRefused(wrong, undefined, other.pins()[server.baseUrl], `is not signed by the record key ${foreign.name}`, 'the key --record-key names');
      // A key whose id does not fit its name and key: refused before anything is uploaded (exit 2).
      const mangled = await other.sign(server.baseUrl, '--record-key', formatVerifierKey(foreign).replace(/\+[0-9a-f]{8}\+/, '+00000000+'));
      expect(mangled.status).toBe(2);
      expect(mangled.stderr).toContain('does not belong to the key and name');

      const proxy = await lyingProxy();
      proxy.lie(statusLie((s) => delete s.signatureRecord));
      const none = client('expected-none');
      const r = await none.sign(proxy.baseUrl, '--record-key', keyFile);
      expectRefused(r, undefined, none.pins()[identity(proxy)], 'carries no signature record, but the record key', '--record-key');
    },
  );

  dataDirOnly('a service that never showed a record stays usable and says so in one line; jobs unpin-record forgets a pin', async () => {
    const proxy = await lyingProxy();
    proxy.lie(statusLie((s) => delete s.signatureRecord));
    const c = client('never');
    const r = await c.sign(proxy.baseUrl);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.split('\n').filter((l) => l.includes('offers no signature record'))).toHaveLength(1);
    expect(c.pins()).toEqual({});

    proxy.lie((_path, body) => body);
    expect((await c.sign(proxy.baseUrl)).status).toBe(0);
    expect(Object.keys(c.pins())).toEqual([identity(proxy)]);
    const unpin = await c.jobs('unpin-record', '--base-url', `${proxy.baseUrl}/`);
    expect(unpin.status, unpin.stderr).toBe(0);
    expect(unpin.stdout).toContain(`removed the record pin of ${identity(proxy)}`);
    expect(c.pins()).toEqual({});
  });

  dataDirOnly('a damaged job ledger is an error naming it, not an empty ledger that trusts any key again', async () => {
    const c = client('damaged');
    expect((await c.sign(server.baseUrl)).status).toBe(0);
    writeFileSync(c.ledger, '{"jobs": [', 'utf8');
    const r = await c.sign(server.baseUrl);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain(`${c.ledger}: the job ledger is damaged`);
    expect(r.stderr).toContain('Move it aside');
    expect(readFileSync(c.ledger, 'utf8')).toBe('{"jobs": [');
  });
});

test('the pin follows the identity of the URL, not its spelling', () => {
  const same = [
    'https://Signing.Example.com/assembly-signing/v1.0',
    'https://signing.example.com:443/assembly-signing/v1.0/',
    'HTTPS://signing.example.com/assembly-signing/v1.0//',
    'https://user@signing.example.com/assembly-signing/v1.0?x=1#f',
  ];
  expect(new Set(same.map(recordIdentity))).toEqual(new Set(['https://signing.example.com/assembly-signing/v1.0']));
  expect(recordIdentity('https://signing.example.com:8443/assembly-signing/v1.0')).toBe('https://signing.example.com:8443/assembly-signing/v1.0');
  expect(recordIdentity('https://signing.example.com/Assembly-Signing/v1.0')).not.toBe(recordIdentity('https://signing.example.com/assembly-signing/v1.0'));
});
