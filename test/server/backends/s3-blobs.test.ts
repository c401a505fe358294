// Job files in S3-compatible object storage: an API process and a worker process that share no folder, only the
// PostgreSQL database and a bucket. The bucket is served by s3rver (npm), an S3 emulation on loopback that
// speaks the S3 REST protocol the AWS SDK uses and checks SigV4 signatures; it has no IAM policies,
// multipart-upload limits, versioning, object locks or server-side encryption (docs/deploy.md).
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { join } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { S3Blobs } from '../../../src/server/backends/s3/s3-blobs.js';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readZip } from '../../../src/zip/read-zip.js';
import { freshDatabase, requireDatabase } from '../../helpers/database.js';
import { fixture, hasMono, runMono } from '../../helpers/fixtures.js';
import { uploadForm } from '../../helpers/server.js';
import { sampleProjectArchive } from '../../helpers/archives.js';
import {
  cliToken,
  refusal,
  runSigngate,
  sandboxConfigCopy,
  startServiceProcess,
  stopServiceProcess,
  waitJobFinished,
  type ServiceProcess,
} from '../../helpers/service-process.js';
import { waitUntil } from '../../helpers/wait.js';

const addin = fixture('findings/passing/FindingAddin.dll');
const credentials = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

describe.skipIf(!requireDatabase())('object storage (s3rver) for job files', () => {
  let s3rver: { run(): Promise<{ port: number }>; close(): Promise<void> };
  let endpoint: string;
  let client: S3Client;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let token: string;
  let database: string;
  let apiArgs: string[];
  let env: NodeJS.ProcessEnv;
  const apiDir = mkdtempSync(join(tmpdir(), 'signgate-s3-api-'));
  const workerDir = mkdtempSync(join(tmpdir(), 'signgate-s3-worker-'));
  const call = (path: string, init: RequestInit = {}) => fetch(`${api.baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${token}` } });
  const finished = (id: string) => waitJobFinished(api.baseUrl, token, id);
  const keys = async (prefix = 'prod/') =>
    ((await client.send(new ListObjectsV2Command({ Bucket: 'signgate', Prefix: prefix }))).Contents ?? []).map((o) => o.Key!).sort();

  beforeAll(async () => {
    s3rver = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: mkdtempSync(join(tmpdir(), 'signgate-s3rver-')),
      configureBuckets: [{ name: 'signgate' }],
    });
    const { port } = await s3rver.run();
    endpoint = `http://127.0.0.1:${port}`;
    client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    database = await freshDatabase();
    const config = sandboxConfigCopy();
    env = { SIGNGATE_DATABASE_URL: database, ...credentials };
    const blobStore = `s3://signgate/prod?endpoint=${encodeURIComponent(endpoint)}`;
    apiArgs = ['--config', config, '--data-dir', apiDir, '--role', 'api', '--blob-store', blobStore, '--lease-timeout', '2'];
    api = await startServiceProcess(apiArgs, env);
    worker = await startServiceProcess(
      ['--config', config, '--data-dir', workerDir, '--role', 'worker', '--blob-store', blobStore, '--lease-timeout', '2'],
      env,
    );
    token = await cliToken(['--config', config, '--database', database]);
  });

  afterAll(async () => {
    await Promise.all([api, worker].filter(Boolean).map((p) => stopServiceProcess(p)));
    client?.destroy();
    await s3rver?.close();
  });

  test('upload on the API node, signing on the worker node: files only in the bucket; the package verifies; DELETE removes every object', async () => {
    expect((await fetch(`http://127.0.0.1:${api.port}/readyz`)).status).toBe(200);
    const files = [
      { name: 'FindingAddin.dll', bytes: addin },
      { name: 'Addins/de/FindingAddin.dll', bytes: addin },
    ];
    const upload = await call('/assemblies', { method: 'POST', body: uploadForm(files) });
    expect(upload.status).toBe(201);
    const { id } = await upload.json();
    expect(await keys(`prod/jobs/sandbox/${id}/`)).toEqual([
      `prod/jobs/sandbox/${id}/uploads/Addins/de/FindingAddin.dll`,
      `prod/jobs/sandbox/${id}/uploads/FindingAddin.dll`,
    ]);
    const status = await finished(id);
    expect(status.assemblies.map((a: { fileProcessingState: string }) => a.fileProcessingState)).toEqual(['Signed', 'Signed']);
    const objects = await keys(`prod/jobs/sandbox/${id}/`);
    expect(objects.filter((k) => /\/result-[0-9a-f-]+\.zip$/.test(k)).length).toBe(1);
    // Neither node keeps the job's files once it is done with them.
    expect(existsSync(join(apiDir, 'jobs', 'sandbox')) ? readdirSync(join(apiDir, 'jobs', 'sandbox')) : []).toEqual([]);
    // The worker removes its scratch folder right after it publishes the job: give it a moment, bounded.
    const scratch = () => (existsSync(join(workerDir, 'work')) ? readdirSync(join(workerDir, 'work')) : []);
    await waitUntil("the worker's scratch folder to be emptied", () => scratch().length === 0, scratch);
    const entries = await readZip(new Uint8Array(await (await call(`/assemblies/${id}`)).arrayBuffer()));
    expect(entries.map((e) => e.name).sort()).toEqual(['Addins/de/FindingAddin.dll', 'FindingAddin.dll', 'signing-log.txt']);
    const signed = entries.find((e) => e.name === 'Addins/de/FindingAddin.dll')!.bytes;
    expect(Buffer.compare(signed, Buffer.from(addin))).not.toBe(0);
    if (hasMono) {
      const path = join(apiDir, 'check.dll');
      writeFileSync(path, signed);
      expect(runMono('sn', ['-vf', path]).stdout).toContain('is strongnamed');
    }
    expect((await call(`/assemblies/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await keys(`prod/jobs/sandbox/${id}/`)).toEqual([]);
    expect((await call(`/assemblies/${id}/status`)).status).toBe(404);
  });

  test('an archive job: its other files and manifest reach the bucket, and GET /archives/{id} on the API node returns every file', async () => {
    const { zip, entries } = await sampleProjectArchive();
    const form = new FormData();
    form.append('archive', new Blob([zip]), 'SampleAddin.zip');
    const upload = await call('/archives', { method: 'POST', body: form });
    expect(upload.status).toBe(201);
    const { id } = await upload.json();
    const stored = await keys(`prod/jobs/sandbox/${id}/`);
    expect(stored).toContain(`prod/jobs/sandbox/${id}/archive.json`);
    expect(stored).toContain(`prod/jobs/sandbox/${id}/archive-files/README.txt`);
    await finished(id);
    const download = await call(`/archives/${id}`);
    expect(download.status).toBe(200);
    const back = new Map((await readZip(new Uint8Array(await download.arrayBuffer()))).map((e) => [e.name, e.bytes]));
    for (const e of entries) expect(back.has(e.name), e.name).toBe(true);
    for (const name of ['README.txt', 'config/settings.json']) expect(back.get(name)!.equals(entries.find((e) => e.name === name)!.bytes), name).toBe(true);
    expect(Buffer.compare(back.get('SampleAddin.dll')!, entries.find((e) => e.name === 'SampleAddin.dll')!.bytes)).not.toBe(0);
    expect(back.get('signing-logs/SampleAddin.dll.log')!.toString()).toContain('Signed');
    expect((await call(`/assemblies/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await keys(`prod/jobs/sandbox/${id}/`)).toEqual([]);
  });

  test("every line either node wrote is one JSON object: the AWS SDK's multi-line notice about Node versions is not among them", () => {
    for (const node of [api, worker]) {
      expect(node.stderr()).toBe('');
      const lines = node.stdout().split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
      expect(node.stdout()).not.toContain('NodeVersionSupportWarning');
    }
  });

  test('kill -9 the API node during an upload: nothing reaches the bucket; restarted, the node removes the half upload', async () => {
    const boundary = 'b0undary';
    const req = request({
      host: '127.0.0.1',
      port: api.port,
      method: 'POST',
      path: '/assembly-signing/v1.0/assemblies',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': 10_000_000 },
    });
    req.on('error', () => {});
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="files[0]"; filename="Half.dll"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    req.write(Buffer.alloc(256 * 1024, 7));
    const db = new pg.Pool({ connectionString: database, max: 1 });
    const uploading = async () => (await db.query(`SELECT count(*)::int AS n FROM signgate_jobs WHERE state = 'uploading'`)).rows[0].n as number;
    try {
      // The job's row, and the upload's folder in tmp/: both exist before the node is killed.
      const tmpEntries = () => (existsSync(join(apiDir, 'tmp')) ? readdirSync(join(apiDir, 'tmp')).length : 0);
      await waitUntil(
        "the upload's row and its folder in tmp/",
        async () => (await uploading()) > 0 && tmpEntries() > 0,
        () => `${tmpEntries()} entries in tmp/`,
      );
      await stopServiceProcess(api);
      expect(readdirSync(join(apiDir, 'tmp')).length).toBe(1);
      expect(await keys()).toEqual([]);
      api = await startServiceProcess(apiArgs, env);
      expect(readdirSync(join(apiDir, 'tmp'))).toEqual([]);
      await waitUntil("the half upload's row to be removed", async () => (await uploading()) === 0);
      expect(await (await call('/assemblies')).json()).toEqual([]);
      expect(await keys()).toEqual([]);
    } finally {
      await db.end();
    }
  });

  test("a stopping worker's fetch of a job's files stops at once: aborted before, nothing is written; aborted midway, the rest is not fetched", async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    Object.assign(process.env, credentials);
    const blobs = new S3Blobs({ bucket: 'signgate', prefix: 'fetch-stop/', endpoint, region: 'us-east-1' });
    try {
      const prefix = blobs.key('sandbox', 'big-job', 'uploads/');
      const files = 150;
      for (let i = 0; i < files; i += 25)
        await Promise.all(
          Array.from({ length: Math.min(25, files - i) }, (_, k) =>
            client.send(new PutObjectCommand({ Bucket: 'signgate', Key: `${prefix}f${i + k}.dll`, Body: Buffer.alloc(4096, i + k) })),
          ),
        );
      const before = mkdtempSync(join(tmpdir(), 'signgate-fetch-'));
      await expect(blobs.getFolder(prefix, join(before, 'uploads'), AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
      expect(existsSync(join(before, 'uploads'))).toBe(false);
      const midway = mkdtempSync(join(tmpdir(), 'signgate-fetch-'));
      const controller = new AbortController();
      const fetching = blobs.getFolder(prefix, join(midway, 'uploads'), controller.signal);
      const settled = fetching.then(
        () => 'finished',
        (error: Error) => error.name,
      );
      await waitUntil('the first fetched file', () => existsSync(join(midway, 'uploads')) && readdirSync(join(midway, 'uploads')).length > 0);
      controller.abort();
      expect(await settled).toBe('AbortError');
      expect(readdirSync(join(midway, 'uploads')).length).toBeLessThan(files);
      // Not aborted, the same call fetches every file: the stop is the signal's doing, not a broken fetch.
      const whole = mkdtempSync(join(tmpdir(), 'signgate-fetch-'));
      await blobs.getFolder(prefix, join(whole, 'uploads'));
      expect(readdirSync(join(whole, 'uploads')).length).toBe(files);
      // The result package's upload stops too: aborted before, or midway through 64 MB. (S3 keeps only whole PUTs;
      // s3rver keeps what arrived. Either way the worker's result key is its own and named by no job until the job's
      // row says finished, and the worker removes it when the upload fails.)
      const big = join(whole, 'result.zip');
      writeFileSync(big, Buffer.alloc(64 * 1024 * 1024, 7));
      const resultKey = blobs.key('sandbox', 'big-job', 'result.zip');
      await expect(blobs.putFile(big, resultKey, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
      const stopping = new AbortController();
      const putting = blobs.putFile(big, resultKey, stopping.signal).then(
        () => 'finished',
        (error: Error) => error.name,
      );
      setTimeout(() => stopping.abort(), 30);
      expect(await putting).toBe('AbortError');
      // Not aborted, it is put whole.
      await blobs.putFile(big, resultKey);
      const kept = await client.send(new ListObjectsV2Command({ Bucket: 'signgate', Prefix: resultKey }));
      expect(kept.Contents?.map((o) => o.Size)).toEqual([64 * 1024 * 1024]);
    } finally {
      blobs.close();
      process.env.AWS_ACCESS_KEY_ID = saved.id;
      process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    }
  });

  test('object storage away: an upload is a 503, and every line the node writes is JSON, what a library writes with console too', async () => {
    // A port nobody listens on: the outage. A library's console.warn (as the AWS SDK's notices are) comes from a
    // preload script, multi-line, with a token-shaped string in it.
    const closed = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => done(port));
      });
    });
    const preload = join(mkdtempSync(join(tmpdir(), 'signgate-console-')), 'console.cjs');
    const secret = `sgt_${'a1'.repeat(20)}`;
    writeFileSync(preload, `setTimeout(() => console.warn('a library notice\\nits second line', ${JSON.stringify(secret)}), 500);\n`);
    const blobStore = `s3://signgate/away?endpoint=${encodeURIComponent(`http://127.0.0.1:${closed}`)}`;
    const config = sandboxConfigCopy();
    const node = await startServiceProcess(
      [
        '--config',
        config,
        '--data-dir',
        mkdtempSync(join(tmpdir(), 'signgate-s3-away-')),
        '--role',
        'api',
        '--blob-store',
        blobStore,
        '--record-key',
        join(apiDir, 'record-key.pem'),
      ],
      {
        ...env,
        NODE_OPTIONS: `--require ${preload}`,
      },
    );
    try {
      const upload = await fetch(`${node.baseUrl}/assemblies`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: uploadForm([{ name: 'FindingAddin.dll', bytes: addin }]),
      });
      expect(upload.status).toBe(503);
      await waitUntil(
        'the library notice in the log',
        () => node.stdout().includes('a library notice'),
        () => node.stdout(),
      );
      expect(node.stderr()).toBe('');
      const lines = node.stdout().split('\n').filter(Boolean);
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
      const notice = lines.map((l) => JSON.parse(l) as { level: number; source?: string; msg: string }).find((l) => l.msg.includes('a library notice'))!;
      expect(notice).toMatchObject({ level: 40, source: 'console' });
      expect(notice.msg).toContain('its second line');
      expect(node.stdout()).not.toContain(secret);
    } finally {
      await stopServiceProcess(node);
    }
  });

  test('--blob-store without --database, and a URL that is not s3://: clear refusals', async () => {
    const config = sandboxConfigCopy();
    const alone = await runSigngate(['serve', '--config', config, '--data-dir', apiDir, '--port', '0', '--blob-store', 's3://signgate'], {
      SIGNGATE_DATABASE_URL: '',
    });
    expect(alone.code).toBe(2);
    expect(refusal(alone.out)).toMatch(/--blob-store needs --database/);
    const wrong = await runSigngate(['serve', '--config', config, '--data-dir', apiDir, '--port', '0', '--blob-store', 'https://bucket.example'], {});
    expect(wrong.code).toBe(2);
    expect(refusal(wrong.out)).toMatch(/is not an s3:\/\/bucket URL/);
    // A key in the URL is refused and never echoed, on the command line or in the error.
    const secret = 'wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY';
    const keyed = await runSigngate(
      ['serve', '--config', config, '--data-dir', apiDir, '--port', '0', '--database', database, '--blob-store', `s3://AKIAEXAMPLE:${secret}@signgate/jobs`],
      {},
    );
    expect(keyed.code).toBe(2);
    expect(refusal(keyed.out)).toMatch(/names a user or key before the bucket/);
    expect(keyed.err + keyed.out).not.toContain(secret);
    expect(keyed.err + keyed.out).not.toContain('AKIAEXAMPLE');
  });
});
