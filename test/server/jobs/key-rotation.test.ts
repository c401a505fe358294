// Key rotation: an option's keyPair changes while jobs are in flight. A job is signed with the key the option had
// when the job was accepted (its previousKeys entry); a job accepted after the change gets the new key; both
// verify. A job whose accepted key is no longer configured fails with a message that says so.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { verifyRecordText } from '../../../src/record/signature-record.js';
import { processJob } from '../../../src/server/jobs/process-job.js';
import type { JobRecord } from '../../../src/server/domain/job.js';
import { readModule } from '../../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../../src/strongname/key-blob.js';
import { verifyStrongName } from '../../../src/strongname/strong-name.js';
import { publicKeyToken } from '../../../src/strongname/key-token.js';
import { readZip } from '../../../src/zip/read-zip.js';
import { fixture, fixturePath } from '../../helpers/fixtures.js';
import { api, sandboxConfig, startServer, uploadForm, waitFinished } from '../../helpers/server.js';

const OLD = '../test-keys/12345_keypair.snk';
const NEW = '../test-keys/other_keypair.snk';
const tokenOf = (path: string) => publicKeyToken(parseStrongNameKeyFile(readFileSync(fixturePath(`server/${path}`))).publicKey.blob);
// Built against the old key (the sample add-in) and against the new one (the same add-in, delay-signed with "other").
const oldBuild = fixture('findings/passing/FindingAddin.dll');
const newBuild = fixture('findings/wrong-key/FindingAddin.dll');

/** The sandbox with option 12345 on `keyPair` (and `previousKeys`), option 67890 left out. */
const configWith = (keyPair: string, previousKeys?: string[]) =>
  sandboxConfig((c) => {
    const sandbox = c.organizations.find((o) => o.id === 'sandbox')!;
    sandbox.licenses = [{ optionId: 12345, keyPair, ...(previousKeys ? { previousKeys: previousKeys.map((k) => ({ keyPair: k })) } : {}) }];
  });

describe('key rotation', () => {
  test('a job in flight when the key changes finishes with the old key, a new job gets the new key, both verify; the old build is refused afterwards', async () => {
    const server = await startServer({ config: configWith(OLD) });
    try {
      const token = server.token();
      // Enough files that the job is still being signed when the configuration changes.
      const files = Array.from({ length: 60 }, (_, i) => ({ name: `Old/F${String(i).padStart(2, '0')}.dll`, bytes: oldBuild }));
      const first = (await (await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(files) })).json()).id as string;
      let status = await (await api(server, `/assemblies/${first}/status`, token)).json();
      expect(status.processingFinished).toBe(false);
      server.setConfig(configWith(NEW, [OLD]));
      const second = (await (await api(server, '/assemblies', token, { method: 'POST', body: uploadForm([{ name: 'New.dll', bytes: newBuild }]) })).json())
        .id as string;
      const stale = (await (await api(server, '/assemblies', token, { method: 'POST', body: uploadForm([{ name: 'Stale.dll', bytes: oldBuild }]) })).json())
        .id as string;
      status = await waitFinished(server, token, first);
      expect(status.assemblies.every((a: { fileProcessingState: string }) => a.fileProcessingState === 'Signed')).toBe(true);
      const secondStatus = await waitFinished(server, token, second);
      expect(secondStatus.assemblies[0]!.fileProcessingState).toBe('Signed');
      // A job accepted after the change is signed with the new key only: an old build is not the option's any more.
      const staleStatus = await waitFinished(server, token, stale);
      expect(staleStatus.assemblies[0]!.fileProcessingState).toBe('Error');

      const signedFile = async (id: string, name: string) =>
        (await readZip(new Uint8Array(await (await api(server, `/assemblies/${id}`, token)).arrayBuffer()))).find((e) => e.name === name)!.bytes;
      const oldSigned = await signedFile(first, 'Old/F59.dll');
      const newSigned = await signedFile(second, 'New.dll');
      const oldKey = parseStrongNameKeyFile(readFileSync(fixturePath('server/../test-keys/12345_keypair.snk'))).publicKey;
      const newKey = parseStrongNameKeyFile(readFileSync(fixturePath('server/../test-keys/other_keypair.snk'))).publicKey;
      expect(verifyStrongName(readModule(oldSigned), { expectedKey: oldKey }).valid).toBe(true);
      expect(verifyStrongName(readModule(newSigned), { expectedKey: newKey }).valid).toBe(true);

      // The record names the key each file was signed with.
      const lines: string[] = [];
      await server.app.signgate.store.signatures.exportTo((l) => void lines.push(l));
      const entries = verifyRecordText(lines.join('')).entryList;
      const ofJob = (id: string) => entries.filter((e) => e.job === id);
      expect(ofJob(first).length).toBe(60);
      expect(new Set(ofJob(first).map((e) => `${e.keyToken} ${e.keyLocation}`))).toEqual(new Set([`${tokenOf(OLD)} ${OLD}`]));
      expect(ofJob(second).map((e) => [e.keyToken, e.keyLocation, e.signedSha256])).toEqual([
        [tokenOf(NEW), NEW, createHash('sha256').update(newSigned).digest('hex')],
      ]);
      expect(ofJob(stale)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  /** A job of the old build accepted while option 12345 had the old key, not yet started. */
  const queuedJob = () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-rotation-'));
    mkdirSync(join(dir, 'uploads'));
    writeFileSync(join(dir, 'uploads', 'FindingAddin.dll'), oldBuild);
    const record: JobRecord = {
      id: '00000000-0000-4000-8000-000000000001',
      organization: 'sandbox',
      comment: null,
      createdAt: new Date().toISOString(),
      processingFinished: false,
      assemblies: [
        {
          fileName: 'FindingAddin.dll',
          size: oldBuild.length,
          sha256: createHash('sha256').update(oldBuild).digest('hex'),
          fileProcessingState: 'Pending',
          messages: [],
        },
      ],
      submittedBy: { user: 'ci', tokenId: null },
      acceptedKeys: [{ optionId: 12345, token: tokenOf(OLD) }],
    };
    return { dir, record };
  };

  test('a job accepted before the change but started after it (queued, or taken over by another worker) signs with the old key from previousKeys', async () => {
    const { dir, record } = queuedJob();
    const saved: { keyToken: string; keyLocation: string }[][] = [];
    await processJob({ folder: dir, save: async (_r, signatures) => void saved.push([...(signatures ?? [])]) }, configWith(NEW, [OLD]), record);
    expect(record.assemblies[0]!.fileProcessingState).toBe('Signed');
    expect(saved.at(-1)!.map((e) => [e.keyToken, e.keyLocation])).toEqual([[tokenOf(OLD), OLD]]);
  });

  test('a job accepted with a key the configuration no longer holds: every file an error saying so, nothing signed', async () => {
    const { dir, record } = queuedJob();
    const saved: unknown[] = [];
    await processJob({ folder: dir, save: async (_r, signatures) => void saved.push(signatures) }, configWith(NEW), record);
    expect(record.assemblies[0]!.fileProcessingState).toBe('Error');
    expect(record.assemblies[0]!.messages.map((m) => m.message).join('\n')).toContain(
      `the key of option 12345 this job was accepted with (key token ${tokenOf(OLD)}) is no longer in the service's configuration`,
    );
    expect(saved.at(-1)).toEqual([]);
  });

  test('the configuration refuses the current key among previousKeys; a previous key is read with where it lives', () => {
    expect(() => configWith(OLD, [OLD])).toThrow(/previousKeys names the option's current key/);
    const config = configWith(NEW, [OLD]);
    const license = config.organizations.get('sandbox')!.licenses[0]!;
    expect(license.previous.map((k) => [k.token, k.keyLocation])).toEqual([[tokenOf(OLD), OLD]]);
  });
});
