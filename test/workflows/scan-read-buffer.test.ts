// inspect reads each file into the buffer of the file before (scan-file.ts): the records must be those of files
// read afresh, also when Authenticode signatures come between (the Authenticode reader keeps the certificates it
// has read, which may be views of the file they came from).
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { inspectAssembly } from '../../src/strongname/assembly-info.js';
import { inspectFile } from '../../src/workflows/scan.js';
import { authenticodeSign, hasOsslsigncode, makeTestPki, removeTestPki, type TestPki } from '../helpers/authenticode.js';
import { fixturePath } from '../helpers/fixtures.js';

describe.skipIf(!hasOsslsigncode)('inspect reads each file into the buffer of the file before', () => {
  let pki: TestPki | undefined;
  beforeAll(async () => {
    pki = await makeTestPki();
  });
  afterAll(() => removeTestPki(pki));

  test('records of signed, unsigned and Authenticode-signed files in a row are those of fresh reads', async () => {
    const dir = pki!.dir;
    await authenticodeSign(pki!, fixturePath('assemblies/signed-2048.dll'), join(dir, 'first.dll'));
    await authenticodeSign(pki!, fixturePath('assemblies/signed-1024.dll'), join(dir, 'third.dll'));
    // Not a PE image, as long as the signed file: read into its buffer, it would overwrite all of it.
    writeFileSync(join(dir, 'junk.dll'), Buffer.alloc(statSync(join(dir, 'first.dll')).size, 0x5a));
    // A big file first (the buffer grows), then smaller ones read into it, then signed files with the same chain.
    const paths = [
      fixturePath('assemblies/pe32plus-signed.dll'),
      fixturePath('assemblies/unsigned.dll'),
      join(dir, 'first.dll'),
      join(dir, 'junk.dll'),
      fixturePath('assemblies/delay-1024.dll'),
      fixturePath('assemblies/app-delay.exe'),
      join(dir, 'third.dll'),
      join(dir, 'first.dll'),
      fixturePath('assemblies/signed-other-key.dll'),
    ];
    const records = paths.map((p) => inspectFile({ absolutePath: p, displayPath: p }));
    const fresh = paths.map((p) => inspectAssembly(new Uint8Array(readFileSync(p)), p));
    expect(records).toEqual(fresh);
    expect(records.filter((r) => r.authenticode?.state === 'valid')).toHaveLength(3);
  });
});
