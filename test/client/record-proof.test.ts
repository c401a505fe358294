// `signgate sign` checks the service's signature record on every job: the job's entries are in the checkpoint the
// status carries, the checkpoint is signed by the record key pinned the first time, and it continues the latest one
// the job ledger holds for the service. A service whose record was rolled back is refused, naming what was found.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { dataDirOnly } from '../helpers/database.js';
import { fixturePath, runCliAsync } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

const KEY = fixturePath('test-keys/12345_public.snk');
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

dataDirOnly(
  'sign keeps the latest checkpoint per service, checks consistency on the next job, and refuses a service whose record shows fewer entries than before, or whose checkpoints another key signs',
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'signgate-record-proof-'));
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const dataDir = join(work, 'data');
    let server: TestServer = await startServer({ dataDir });
    cleanups.push(() => server.close());
    const port = Number(new URL(server.baseUrl).port);
    const token = server.token();
    const env = { SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: join(work, 'cache') };
    const sign = (n: number) =>
      runCliAsync(
        [
          'sign',
          fixturePath('addin/SampleAddin.dll'),
          '--vendor',
          'Contoso',
          '--key',
          KEY,
          '--base-url',
          server.baseUrl,
          '--destination-path',
          join(work, `out${n}`),
          '--poll-interval',
          '20',
          '--force',
          '--verbose',
        ],
        { env },
      );
    const saved = () => JSON.parse(readFileSync(join(work, 'cache', 'jobs.json'), 'utf8')).recordCheckpoints[server.baseUrl];

    const first = await sign(1);
    expect(first.status, first.stderr).toBe(0);
    expect(saved()).toMatchObject({ size: 1 });
    expect(saved().publicKey).toBe(readFileSync(join(dataDir, 'record-key.pub'), 'utf8').trim());
    const second = await sign(2);
    expect(second.status, second.stderr).toBe(0);
    expect(saved()).toMatchObject({ size: 2 });

    // Rolled back: the record and its head cut to nothing, as someone who can write the data folder could.
    await server.close();
    writeFileSync(join(dataDir, 'signature-record.jsonl'), '');
    writeFileSync(join(dataDir, 'signature-record.head.json'), '{"seq":0,"hash":"0000000000000000000000000000000000000000000000000000000000000000"}\n');
    server = await startServer({ dataDir, port });
    const third = await sign(3);
    expect(third.status).not.toBe(0);
    expect(third.stderr).toContain('SG_ERR_RECORD_PROOF');
    expect(third.stderr).toContain(`${server.baseUrl}: the service shows a signature record of 1 entry, fewer than the 2 it showed on`);
    expect(saved()).toMatchObject({ size: 2 }); // the larger one stays

    // Another record key (the old one removed, the service made a new one): its checkpoints are not the pinned key's.
    const pinned = saved().publicKey as string;
    await server.close();
    rmSync(join(dataDir, 'record-key.pem'));
    server = await startServer({ dataDir, port });
    const fourth = await sign(4);
    expect(fourth.status).not.toBe(0);
    expect(fourth.stderr).toContain('SG_ERR_RECORD_PROOF');
    // Said as a key change, naming both keys, and how to remove the old pin when the operator confirms it.
    expect(fourth.stderr).toContain(`is not signed by the record key ${pinned.split('+')[0]} (key id ${pinned.split('+')[1]}), the key pinned for it on`);
    expect(fourth.stderr).toMatch(/it is signed by signgate-record-[0-9a-f]{8} \(key id [0-9a-f]{8}\): the service changed its record key/);
    expect(fourth.stderr).toContain(`signgate jobs unpin-record --base-url ${server.baseUrl}`);
  },
);
