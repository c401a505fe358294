// A file hashed a part at a time (workflows/files.ts digestFile): what audit --sbom gives of every file that is no
// assembly and of a package's files, never holding a large file whole.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { digestFile } from '../../src/workflows/files.js';

const dir = mkdtempSync(join(tmpdir(), 'signgate-digest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hex = (algorithm: string, bytes: Buffer) => createHash(algorithm).update(bytes).digest('hex');

describe('digestFile', () => {
  test('a file hashed as a whole, across and on the boundaries of the buffer, the buffer reused between files', () => {
    const buffer = Buffer.allocUnsafe(4096);
    for (const [i, size] of [0, 1, 4095, 4096, 4097, 3 * 4096 + 123, 3 * (1 << 20) + 7].entries()) {
      const bytes = Buffer.alloc(size);
      for (let j = 0; j < size; j++) bytes[j] = (j * 31 + i) & 0xff;
      const path = join(dir, `f${i}.bin`);
      writeFileSync(path, bytes);
      const expected = { size, sha256: hex('sha256', bytes), sha512: hex('sha512', bytes) };
      expect(digestFile(path, `f${i}.bin`, buffer)).toEqual(expected);
      expect(digestFile(path, `f${i}.bin`)).toEqual(expected);
    }
  });

  test('a file that is missing, or a folder, fails with SG_ERR_IO_READ naming it as shown', () => {
    expect(() => digestFile(join(dir, 'gone.so'), 'release/gone.so')).toThrow(
      expect.objectContaining({ code: 'SG_ERR_IO_READ', message: expect.stringMatching(/^release\/gone\.so: the file does not exist/) }),
    );
    expect(() => digestFile(dir, 'release/sub')).toThrow(
      expect.objectContaining({ code: 'SG_ERR_IO_READ', message: 'release/sub: it is a folder, not a file' }),
    );
  });
});
