// DELETE of a job while the worker signs it: the service stays up, the job is gone for good (also after a
// restart), and nothing of it is left on disk.
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixture, fixturePath } from '../../helpers/fixtures.js';
import { startServer, uploadForm } from '../../helpers/server.js';
import { cliToken, startServiceProcess, stopServiceProcess, type ServiceProcess } from '../../helpers/service-process.js';
import { dataDirOnly } from '../../helpers/database.js';

const FILES = 150;
const TRIES = 6;
const addin = fixture('findings/passing/FindingAddin.dll');
const manyFiles = () => Array.from({ length: FILES }, (_, i) => ({ name: `Addins/F${String(i).padStart(3, '0')}.dll`, bytes: addin }));

let dataDir: string;
let service: ServiceProcess;
let exited: number | string | null | undefined;
let token: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'signgate-delete-'));
  const config = fixturePath('server/sandbox.json');
  token = await cliToken(['--config', config, '--data-dir', dataDir]);
  service = await startServiceProcess(['--config', config, '--data-dir', dataDir]);
  void service.exited.then((how) => (exited = how));
});

afterAll(() => stopServiceProcess(service));

const call = (path: string, init: RequestInit = {}) => fetch(`${service.baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${token}` } });
const jobsOnDisk = () => (existsSync(join(dataDir, 'jobs', 'sandbox')) ? readdirSync(join(dataDir, 'jobs', 'sandbox')) : []);

describe('DELETE while the worker signs the job', () => {
  dataDirOnly(`${TRIES} jobs of ${FILES} files, each deleted while it is being signed: 204, the service stays up, the job never comes back`, async () => {
    const deleted: string[] = [];
    let deletedMidway = 0;
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const upload = await call('/assemblies', { method: 'POST', body: uploadForm(manyFiles()) });
      expect(upload.status).toBe(201);
      const { id } = await upload.json();
      // Wait until the worker is in the middle of the job: some files signed, not finished.
      for (;;) {
        const status = await (await call(`/assemblies/${id}/status`)).json();
        const signed = status.assemblies.filter((a: { fileProcessingState: string }) => a.fileProcessingState === 'Signed').length;
        if (status.processingFinished) break;
        // Step the moment of the delete through the job from one attempt to the next.
        if (signed > (attempt * FILES) / (TRIES + 2)) {
          deletedMidway++;
          break;
        }
      }
      expect((await call(`/assemblies/${id}`, { method: 'DELETE' })).status).toBe(204);
      deleted.push(id);
      // Give the worker time to reach the end of the job, where the crash happened.
      await new Promise((r) => setTimeout(r, 1500));
      expect(exited, service.stdout().slice(-2000)).toBeUndefined();
      expect((await call(`/assemblies/${id}/status`)).status).toBe(404);
      expect((await call(`/assemblies/${id}`, { method: 'DELETE' })).status).toBe(404);
      expect(jobsOnDisk()).not.toContain(id);
    }
    expect(deletedMidway).toBeGreaterThanOrEqual(TRIES / 2);
    expect((await call('/licenses')).status).toBe(200);

    // A restart (after kill -9) lists none of the deleted jobs and resumes none of them.
    await stopServiceProcess(service);
    const restarted = await startServer({ dataDir });
    try {
      const list = await (await fetch(`${restarted.baseUrl}/assemblies`, { headers: { authorization: `Bearer ${token}` } })).json();
      expect(list.map((j: { id: string }) => j.id).filter((id: string) => deleted.includes(id))).toEqual([]);
      expect(jobsOnDisk().filter((id) => deleted.includes(id))).toEqual([]);
    } finally {
      await restarted.close();
    }
  });
});

describe('the result package', () => {
  test('a file that vanished before the package is written: writeZip rejects, leaves no temporary file and the process lives on', async () => {
    const { writeZipFile, zipEntryOfFile } = await import('../../../src/server/zip-file.js');
    const dir = mkdtempSync(join(tmpdir(), 'signgate-zip-'));
    await expect(writeZipFile(join(dir, 'result.zip'), [zipEntryOfFile('Gone.dll', join(dir, 'gone', 'Gone.dll'))])).rejects.toThrow(/ENOENT/);
    expect(readdirSync(dir)).toEqual([]);
  });
});
