// A job's bytes between its steps: the upload is written to disk once and signed from the bytes received (not read
// back), the result package is written once and downloaded from memory; past the memory budget, or after a restart,
// the files on disk serve as before, with the same result. The job file is written when the job is accepted, when it
// starts to finish and when it is finished, not for every file.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readZip } from '../../../src/zip/read-zip.js';
import type { JobRecord } from '../../../src/server/domain/job.js';
import { dataDirOnly } from '../../helpers/database.js';
import { fixture } from '../../helpers/fixtures.js';
import { api, startServer, uploadForm, waitFinished, type TestServer } from '../../helpers/server.js';

const LARGE = fixture('bench/LargeAddin.dll'); // 516 KiB, signed with option 12345
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const files = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `Addins/Large${i}.dll`, bytes: LARGE }));

/** Uploads, waits, downloads: the package's files by name. */
async function signedJob(server: TestServer, count: number): Promise<{ id: string; entries: Map<string, Uint8Array> }> {
  const token = server.token();
  const upload = await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(files(count)) });
  expect(upload.status, await upload.clone().text()).toBe(201);
  const { id } = (await upload.json()) as { id: string };
  const status = await waitFinished(server, token, id, 120_000);
  expect(status.assemblies.map((a) => a.fileProcessingState)).toEqual(Array(count).fill('Signed'));
  // What was accepted is on disk as it was sent.
  for (let i = 0; i < count; i++)
    expect(sha256(readFileSync(join(server.app.signgate.store.files.folder('sandbox', id), 'uploads', 'Addins', `Large${i}.dll`)))).toBe(sha256(LARGE));
  const download = await api(server, `/assemblies/${id}`, token);
  expect(download.status).toBe(200);
  const zip = await readZip(new Uint8Array(await download.arrayBuffer()));
  return { id, entries: new Map(zip.filter((z) => z.name.endsWith('.dll')).map((z) => [z.name, z.bytes])) };
}

describe('a job in memory between its steps', () => {
  test('signed from the bytes received and downloaded from the package written: nothing read back; the memory is given back on delete', async () => {
    const server = await startServer();
    try {
      const { id, entries } = await signedJob(server, 4);
      const memory = server.app.signgate.memory!;
      expect(memory.counts).toEqual({ uploadsFromMemory: 4, uploadsReadBack: 0, packagesFromMemory: 1, packagesReadBack: 0 });
      expect(entries.size).toBe(4);
      for (const bytes of entries.values()) expect(sha256(bytes)).not.toBe(sha256(LARGE));
      expect(memory.usedBytes).toBeGreaterThan(0); // the package
      expect((await api(server, `/assemblies/${id}`, server.token(), { method: 'DELETE' })).status).toBe(204);
      expect(memory.usedBytes).toBe(0);
    } finally {
      await server.close();
    }
  }, 180_000);

  test('without memory (0 bytes) and with less memory than the upload: the same signed files, read back where not kept', async () => {
    const servers = [await startServer(), await startServer({ build: { jobMemoryBytes: 0 } }), await startServer({ build: { jobMemoryBytes: 1024 * 1024 } })];
    try {
      const results = [];
      for (const server of servers) results.push(await signedJob(server, 3));
      const [all, none, some] = results.map((r) => [...r.entries].map(([name, bytes]) => `${name} ${sha256(bytes)}`).sort());
      expect(none).toEqual(all);
      expect(some).toEqual(all);
      expect(servers[1]!.app.signgate.memory!.counts).toEqual({ uploadsFromMemory: 0, uploadsReadBack: 3, packagesFromMemory: 0, packagesReadBack: 1 });
      // 1 MiB holds one file and a part of the next: the rest of that one went to disk as it came, and was read back.
      const partly = servers[2]!.app.signgate.memory!.counts;
      expect(partly.uploadsFromMemory).toBeGreaterThanOrEqual(1);
      expect(partly.uploadsReadBack).toBeGreaterThanOrEqual(1);
      expect(partly.uploadsFromMemory + partly.uploadsReadBack).toBe(3);
    } finally {
      for (const server of servers) await server.close();
    }
  }, 300_000);

  dataDirOnly(
    'the job file is written when the job starts to finish and when it is finished, not for each file; status shows each file as it is done',
    async () => {
      const server = await startServer();
      try {
        const store = server.app.signgate.store;
        const saved: JobRecord[] = [];
        const save = store.save.bind(store);
        store.save = async (record, signatures) => {
          saved.push(structuredClone(record));
          return save(record, signatures);
        };
        const { id } = await signedJob(server, 6);
        const ofJob = saved.filter((r) => r.id === id);
        expect(ofJob.map((r) => r.processingFinished)).toEqual([false, true]);
        expect(ofJob[0]!.assemblies.map((a) => a.fileProcessingState)).toEqual(Array(6).fill('Signed'));
        // Progress without writing: what a status call sees of a job being processed (the worker is stopped here).
        await server.app.signgate.worker.stop();
        const token = server.token();
        const { id: second } = (await (await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(files(1)) })).json()) as { id: string };
        const record = (await store.get('sandbox', second))!;
        record.assemblies[0]!.fileProcessingState = 'Processing';
        await store.progress!(record);
        const status = (await (await api(server, `/assemblies/${second}/status`, token)).json()) as JobRecord;
        expect(status.assemblies[0]!.fileProcessingState).toBe('Processing');
        const onDisk = JSON.parse(readFileSync(join(store.files.folder('sandbox', second), 'job.json'), 'utf8')) as JobRecord;
        expect(onDisk.assemblies[0]!.fileProcessingState).toBe('Pending');
      } finally {
        await server.close();
      }
    },
    180_000,
  );
});
