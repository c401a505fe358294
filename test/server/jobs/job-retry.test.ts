// A job whose processing fails (a full disk, a failing read) is never left unfinished with nobody working on it:
// it is queued again after a wait, and after the last attempt it is finished with an error on every file and a
// package of the files as uploaded. The failures come from a signer that fails as a full disk does.
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { JobStore } from '../../../src/server/backends/data-dir/job-store.js';
import type { JobRecord } from '../../../src/server/domain/job.js';
import { inProcessSigner, type FileSigner } from '../../../src/server/jobs/sign-file.js';
import { SigningWorker } from '../../../src/server/jobs/signing-worker.js';
import { readZip } from '../../../src/zip/read-zip.js';
import { fixturePath } from '../../helpers/fixtures.js';
import pg from 'pg';
import { MAX_ATTEMPTS } from '../../../src/server/domain/lease.js';
import { databaseFor, STORE_UNDER_TEST } from '../../helpers/database.js';
import { sandboxConfig, startServer } from '../../helpers/server.js';
import { waitUntil } from '../../helpers/wait.js';

const ADDIN = fixturePath('addin/SampleAddin.dll');

/** A signer whose first `failures` calls fail as writing to a full disk does. */
function failingSigner(failures: number): FileSigner & { calls: number } {
  const signer = {
    ahead: 0,
    calls: 0,
    async sign(bytes: Uint8Array, key: Parameters<FileSigner['sign']>[1]) {
      if (signer.calls++ < failures) throw Object.assign(new Error("ENOSPC: no space left on device, write '/var/lib/signgate/jobs/x'"), { code: 'ENOSPC' });
      return inProcessSigner.sign(bytes, key);
    },
    pack: (bytes: Uint8Array) => inProcessSigner.pack(bytes),
  };
  return signer;
}

/** A job of one file, committed to a fresh data directory. */
async function oneJob(): Promise<{ store: JobStore; record: JobRecord }> {
  const store = new JobStore(mkdtempSync(join(tmpdir(), 'signgate-retry-')));
  const pending = (await store.reserve('sandbox', 10))!;
  copyFileSync(ADDIN, join(pending.uploadsDir, 'SampleAddin.dll'));
  const bytes = readFileSync(ADDIN);
  const record: JobRecord = {
    id: pending.id,
    organization: 'sandbox',
    comment: null,
    createdAt: new Date().toISOString(),
    processingFinished: false,
    assemblies: [{ fileName: 'SampleAddin.dll', size: bytes.length, sha256: 'x', fileProcessingState: 'Pending', messages: [] }],
  };
  await store.commit(pending, record);
  return { store, record };
}

const quiet = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  trace() {},
  fatal() {},
  child() {
    return this;
  },
  level: 'silent',
  silent() {},
} as never;

describe('a job whose processing fails', () => {
  test('fails twice, then works: queued again after each wait, finished and signed', async () => {
    const { store, record } = await oneJob();
    const signer = failingSigner(2);
    const worker = new SigningWorker(store, () => sandboxConfig(), quiet, { signer, retryDelaysMs: [50, 50, 50] });
    worker.enqueue('sandbox', record.id);
    await waitUntil('the job to finish', async () => (await store.get('sandbox', record.id))!.processingFinished, undefined, { intervalMs: 20 });
    const done = (await store.get('sandbox', record.id))!;
    expect(done.assemblies[0]!.fileProcessingState).toBe('Signed');
    expect(signer.calls).toBe(3);
    await worker.stop();
  });

  test('fails every time: after the last wait, finished with an error on every file and the uploads in the package', async () => {
    const { store, record } = await oneJob();
    const worker = new SigningWorker(store, () => sandboxConfig(), quiet, { signer: failingSigner(Infinity), retryDelaysMs: [30, 30] });
    worker.enqueue('sandbox', record.id);
    await waitUntil('the job to finish', async () => (await store.get('sandbox', record.id))!.processingFinished, undefined, { intervalMs: 20 });
    const done = (await store.get('sandbox', record.id))!;
    expect(done.assemblies[0]!.fileProcessingState).toBe('Error');
    const text = done.assemblies[0]!.messages.map((m) => m.message).join(' ');
    expect(text).toContain('the service ran out of storage space (3 attempts)');
    expect(text).not.toContain('/var/lib'); // no paths of the service
    const entries = await readZip(readFileSync(join(store.files.folder('sandbox', record.id), 'result.zip')));
    expect(entries.map((e) => e.name).sort()).toEqual(['SampleAddin.dll', 'signing-log.txt']);
    expect(Buffer.from(entries.find((e) => e.name === 'SampleAddin.dll')!.bytes).equals(readFileSync(ADDIN))).toBe(true);
    await worker.stop();
  });
});

describe.runIf(STORE_UNDER_TEST === 'postgres')('on the PostgreSQL queue', () => {
  test('a job whose attempts ran out (its workers died) is finished with an error on every file, not left unfinished', async () => {
    const server = await startServer();
    try {
      const token = server.token();
      const form = new FormData();
      form.append('files[0]', new Blob([readFileSync(ADDIN)]), 'SampleAddin.dll');
      const created = (await (
        await fetch(`${server.baseUrl}/assemblies`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form })
      ).json()) as { id: string };
      const status = async () =>
        (await (await fetch(`${server.baseUrl}/assemblies/${created.id}/status`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
          processingFinished: boolean;
          assemblies: { fileProcessingState: string; messages: { message: string }[] }[];
        };
      await waitUntil('the job to finish', async () => (await status()).processingFinished, undefined, { intervalMs: 20 });
      // As after five workers died on it: queued again with every attempt used.
      const db = new pg.Client({ connectionString: await databaseFor(server.dataDir) });
      await db.connect();
      await db.query(`UPDATE signgate_jobs SET state = 'queued', attempts = $2, lease_owner = NULL, lease_until = NULL WHERE id = $1`, [
        created.id,
        MAX_ATTEMPTS,
      ]);
      await db.query(`SELECT pg_notify('signgate_jobs', '')`);
      await db.end();
      await waitUntil('the job to end in Error', async () => (await status()).assemblies[0]!.fileProcessingState === 'Error', undefined, { intervalMs: 20 });
      const done = await status();
      expect(done.processingFinished).toBe(true);
      expect(done.assemblies[0]!.messages.map((m) => m.message).join(' ')).toContain(`the service failed to process the job ${MAX_ATTEMPTS} times`);
      const zip = await fetch(`${server.baseUrl}/assemblies/${created.id}`, { headers: { authorization: `Bearer ${token}` } });
      expect(zip.status).toBe(200);
      expect((await readZip(new Uint8Array(await zip.arrayBuffer()))).map((e) => e.name).sort()).toEqual(['SampleAddin.dll', 'signing-log.txt']);
    } finally {
      await server.close();
    }
  });
});
