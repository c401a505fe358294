// The signature record across kill -9 of the service, with real processes on 127.0.0.1, on the data directory and
// on PostgreSQL: after every kill and restart, each file a client can download as signed has exactly one entry
// (job + file), whose signedSha256 is the SHA-256 of the bytes in the job's package, and no entry names bytes that
// no package holds.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { verifyRecordText, type SignatureEntry } from '../../src/record/signature-record.js';
import { readZip } from '../../src/zip/read-zip.js';
import { freshDatabase, requireDatabase } from '../helpers/database.js';
import { fixture } from '../helpers/fixtures.js';
import { uploadForm } from '../helpers/server.js';
import {
  cliToken,
  runSigngate,
  sandboxConfigCopy,
  startServiceProcess,
  stopServiceProcess,
  waitJobFinished,
  type ServiceProcess,
} from '../helpers/service-process.js';

const ADDIN = fixture('addin/SampleAddin.dll');
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A service on `dataDir` (and `database`), restartable on the same port. */
class Service {
  process!: ServiceProcess;
  constructor(
    private readonly args: string[],
    private readonly env: NodeJS.ProcessEnv,
  ) {}
  async start(): Promise<void> {
    this.process = await startServiceProcess([...this.args, ...(this.process ? ['--port', String(this.process.port)] : [])], this.env);
    const p = this.process;
    cleanups.push(() => stopServiceProcess(p));
  }
  kill(): Promise<void> {
    return stopServiceProcess(this.process, 'SIGKILL');
  }
  call(path: string, token: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.process.baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });
  }
}

async function upload(service: Service, token: string, files: number, round: number): Promise<string> {
  const form = uploadForm(Array.from({ length: files }, (_, i) => ({ name: `R${round}/Addin${i}.dll`, bytes: ADDIN })));
  const response = await service.call('/assemblies', token, { method: 'POST', body: form });
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

/** Waits (ceiling: minutes) until the job says finished. */
async function finished(service: Service, token: string, id: string): Promise<void> {
  await waitJobFinished(service.process.baseUrl, token, id);
}

/** The record as `serve record export` writes it, verified. */
async function exported(recordArgs: string[], env: NodeJS.ProcessEnv): Promise<SignatureEntry[]> {
  const r = await runSigngate(['serve', 'record', 'export', ...recordArgs], env);
  expect(r.code, r.err).toBe(0);
  const verified = verifyRecordText(r.out.endsWith('\n') || r.out === '' ? r.out : `${r.out}\n`);
  expect(verified.break).toBeUndefined();
  return verified.entryList;
}

/**
 * Exactly once: one entry per (job, file) returned signed, naming the bytes in the package; no entry for a file the
 * package holds as uploaded, none twice.
 */
async function expectExactlyOnce(service: Service, token: string, jobs: string[], entries: SignatureEntry[]): Promise<number> {
  const keys = entries.map((e) => `${e.job}/${e.file}`);
  expect(new Set(keys).size, 'an entry recorded twice').toBe(keys.length);
  const byKey = new Map(entries.map((e) => [`${e.job}/${e.file}`, e]));
  let signed = 0;
  for (const id of jobs) {
    const zip = await readZip(new Uint8Array(await (await service.call(`/assemblies/${id}`, token)).arrayBuffer()));
    for (const file of zip.filter((z) => z.name.endsWith('.dll'))) {
      const entry = byKey.get(`${id}/${file.name}`);
      byKey.delete(`${id}/${file.name}`);
      if (sha256(file.bytes) === sha256(ADDIN)) {
        expect(entry, `${file.name} of job ${id} came back as uploaded but has an entry`).toBeUndefined();
        continue;
      }
      signed += 1;
      expect(entry, `${file.name} of job ${id} came back signed but has no entry`).toBeDefined();
      expect(entry!.signedSha256).toBe(sha256(file.bytes));
    }
  }
  expect([...byKey.keys()], 'entries for bytes no package holds').toEqual([]);
  return signed;
}

/** Rounds of: upload, kill -9 at a random moment (or once the record grows), restart, wait for the job. */
async function killRounds(service: Service, token: string, rounds: number, recordGrew?: () => boolean): Promise<string[]> {
  const jobs: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const id = await upload(service, token, 12, round);
    jobs.push(id);
    if (recordGrew && round % 2 === 0) {
      // Right after the record's append: the moment between the entries and the finished job file.
      const end = Date.now() + 60_000;
      while (!recordGrew() && Date.now() < end) await new Promise((r) => setImmediate(r));
    } else {
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 1500)));
    }
    await service.kill();
    await service.start();
    await finished(service, token, id);
  }
  return jobs;
}

describe('the signature record is written exactly once per returned file across kill -9', () => {
  test('data directory: a job whose entries were appended before a kill left its job file unfinished is finished as it is, not signed again', async () => {
    const config = sandboxConfigCopy();
    const dataDir = tempDir('signgate-record-kill-');
    const token = await cliToken(['--config', config, '--data-dir', dataDir]);
    const service = new Service(['--config', config, '--data-dir', dataDir], {});
    await service.start();
    const id = await upload(service, token, 5, 0);
    await finished(service, token, id);
    await service.kill();
    // What a kill between the record's append and the job file leaves: the entries, the package, the job file as
    // saved after its last file (every state final), not finished.
    const jobFile = join(dataDir, 'jobs', 'sandbox', id, 'job.json');
    const job = JSON.parse(readFileSync(jobFile, 'utf8'));
    job.processingFinished = false;
    writeFileSync(jobFile, JSON.stringify(job, null, 2));
    await service.start();
    await finished(service, token, id);
    const entries = await exported(['--data-dir', dataDir], {});
    expect(entries.length).toBe(5);
    expect(await expectExactlyOnce(service, token, [id], entries)).toBe(5);
  });

  test('data directory: random kills and kills right after the append, 6 rounds', async () => {
    const config = sandboxConfigCopy();
    const dataDir = tempDir('signgate-record-kill-');
    const token = await cliToken(['--config', config, '--data-dir', dataDir]);
    const service = new Service(['--config', config, '--data-dir', dataDir], {});
    await service.start();
    const recordPath = join(dataDir, 'signature-record.jsonl');
    let size = 0;
    const recordGrew = () => {
      let now: number;
      try {
        now = statSync(recordPath).size;
      } catch {
        now = 0;
      }
      const grew = now > size;
      size = now;
      return grew;
    };
    const jobs = await killRounds(service, token, 6, recordGrew);
    const entries = await exported(['--data-dir', dataDir], {});
    expect(await expectExactlyOnce(service, token, jobs, entries)).toBe(entries.length);
  });

  test.skipIf(!requireDatabase())('PostgreSQL: random kills, 6 rounds', async () => {
    const config = sandboxConfigCopy();
    const dataDir = tempDir('signgate-record-kill-');
    const database = await freshDatabase();
    const env = { SIGNGATE_DATABASE_URL: database };
    const token = await cliToken(['--config', config, '--data-dir', dataDir, '--database', database]);
    const service = new Service(['--config', config, '--data-dir', dataDir, '--lease-timeout', '1'], env);
    await service.start();
    const jobs = await killRounds(service, token, 6);
    const entries = await exported(['--data-dir', dataDir], env);
    expect(await expectExactlyOnce(service, token, jobs, entries)).toBe(entries.length);
  });
});
