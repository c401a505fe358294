// Signing in a pool of worker threads: the same bytes as signing in the service's own thread, several jobs at
// once, and a clear refusal of a bad thread count from the command line or the configuration.
import { afterAll, describe, expect, test } from 'vitest';
import { readModule } from '../../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../../src/strongname/key-blob.js';
import { verifyStrongName } from '../../../src/strongname/strong-name.js';
import { SigningPool } from '../../../src/server/jobs/signing-pool.js';
import { signAndVerify } from '../../../src/server/jobs/sign-file.js';
import { prepareZipEntry } from '../../../src/zip/write-zip.js';
import { readZip } from '../../../src/zip/read-zip.js';
import { fixture, fixturePath, runCli } from '../../helpers/fixtures.js';
import { api, folderFiles, sandboxConfig, startServer, uploadForm, waitFinished, type TestServer } from '../../helpers/server.js';

const keyPair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));
const files = [...folderFiles('addin'), { name: 'Extra/FindingAddin.dll', bytes: fixture('findings/vendor-attribute-false/FindingAddin.dll') }];
const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

/** Uploads `jobs` copies of the set at once; returns each job's states and package entries (name -> bytes). */
async function signAll(server: TestServer, jobs: number) {
  const token = server.token();
  const ids = await Promise.all(
    Array.from({ length: jobs }, async (_, i) => {
      const r = await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(files, `job ${i}`) });
      expect(r.status).toBe(201);
      return (await r.json()).id as string;
    }),
  );
  return Promise.all(
    ids.map(async (id) => {
      const status = await waitFinished(server, token, id);
      expect(status.processingFinished).toBe(true);
      const entries = await readZip(new Uint8Array(await (await api(server, `/assemblies/${id}`, token)).arrayBuffer()));
      return {
        states: Object.fromEntries(status.assemblies.map((a) => [a.fileName, a.fileProcessingState])),
        entries: new Map(entries.filter((e) => e.name !== 'signing-log.txt').map((e) => [e.name, Buffer.from(e.bytes)])),
      };
    }),
  );
}

describe('a signing pool', () => {
  test('signs in other threads, byte for byte as the service thread does', async () => {
    const pool = new SigningPool(2);
    try {
      const inputs = folderFiles('addin').filter((f) => /SampleAddin(\.Helpers)?\.dll$/.test(f.name));
      expect(inputs.length).toBe(2);
      // The pool takes the bytes it is given away from this thread: it gets copies.
      const handedOver = inputs.map((f) => new Uint8Array(f.bytes));
      const signed = await Promise.all(handedOver.map((bytes) => pool.sign(bytes, keyPair)));
      expect(handedOver.every((b) => b.byteLength === 0)).toBe(true);
      const packed = await pool.pack(new Uint8Array(inputs[0]!.bytes));
      expect(pool.completed).toBe(3);
      expect(Buffer.from(packed.data).equals(Buffer.from(prepareZipEntry(inputs[0]!.bytes).data))).toBe(true);
      for (const [i, f] of inputs.entries()) {
        const expected = signAndVerify(f.bytes, keyPair)!;
        expect(Buffer.compare(Buffer.from(signed[i]!.signed), Buffer.from(expected)), f.name).toBe(0);
        expect(verifyStrongName(readModule(signed[i]!.signed), { expectedKey: keyPair.publicKey }).valid).toBe(true);
        // The package entry made in the thread is the one this thread makes of the same signed file.
        const entry = prepareZipEntry(expected);
        expect({ ...signed[i]!.entry, data: Buffer.from(signed[i]!.entry.data) }).toEqual({ ...entry, data: Buffer.from(entry.data) });
      }
    } finally {
      await pool.close();
    }
  });

  test('four jobs at once in a pool of 2 give the packages of one job in the service thread', async () => {
    const inThread = await startServer({ build: { signingWorkers: 0 } });
    const pooled = await startServer({ build: { signingWorkers: 2 } });
    servers.push(inThread, pooled);
    const [reference] = await signAll(inThread, 1);
    expect(Object.values(reference!.states).filter((s) => s === 'Signed').length).toBe(6);
    const results = await signAll(pooled, 4);
    for (const r of results) {
      expect(r.states).toEqual(reference!.states);
      expect([...r.entries.keys()].sort()).toEqual([...reference!.entries.keys()].sort());
      for (const [name, bytes] of r.entries) expect(Buffer.compare(bytes, reference!.entries.get(name)!), name).toBe(0);
    }
  });

  test('a bad thread count: the configuration and --signing-workers are refused, naming the value', () => {
    expect(() => sandboxConfig((c) => Object.assign(c, { signingWorkers: -1 }))).toThrow(/signingWorkers must be >= 0/);
    expect(sandboxConfig((c) => Object.assign(c, { signingWorkers: 3 })).signingWorkers).toBe(3);
    const r = runCli(['serve', '--config', fixturePath('server/sandbox.json'), '--signing-workers', '1.5']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--signing-workers 1.5 is not a whole number');
  });
});
