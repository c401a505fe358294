// The digest thread of audit --sbom (workflows/file-digests.ts): the SHA-256 and SHA-512 of every file, read a
// megabyte at a time on a thread of its own, and the process's heap pace kept although a thread started.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { startFileDigests } from '../../src/workflows/file-digests.js';

const dir = mkdtempSync(join(tmpdir(), 'signgate-digests-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hex = (algorithm: string, bytes: Buffer) => createHash(algorithm).update(bytes).digest('hex');

describe('file digests', () => {
  test('every file hashed as a whole, across and on the megabyte boundaries, in the order given', async () => {
    const sizes = [0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 * (1 << 20) + 12345];
    const files = sizes.map((size, i) => {
      const bytes = Buffer.alloc(size);
      for (let j = 0; j < size; j++) bytes[j] = (j * 31 + i) & 0xff;
      const path = join(dir, `f${i}.bin`);
      writeFileSync(path, bytes);
      return { path, bytes };
    });
    const digests = await (await startFileDigests(files.map((f) => f.path))).result();
    expect([...digests.keys()]).toEqual(files.map((f) => f.path));
    for (const f of files) expect(digests.get(f.path)).toEqual({ size: f.bytes.length, sha256: hex('sha256', f.bytes), sha512: hex('sha512', f.bytes) });
  });

  test('a file that cannot be read fails with SG_ERR_IO_READ naming it', async () => {
    writeFileSync(join(dir, 'there.txt'), 'x');
    const missing = join(dir, 'gone.dll');
    const digests = await startFileDigests([join(dir, 'there.txt'), missing]);
    await expect(digests.result()).rejects.toMatchObject({ code: 'SG_ERR_IO_READ', message: expect.stringContaining(missing) });
  });

  test('starting the thread leaves the heap pace of keepHeapSmall in force (Node sets the flags back when a thread starts)', () => {
    // In a process of its own: allocate objects that survive a while, and report the young generation's largest size.
    const script = `
      const v8 = await import('node:v8');
      const { keepHeapSmall } = await import(${JSON.stringify(pathToFileURL(join(process.cwd(), 'dist/runtime/heap.js')).href)});
      const { startFileDigests } = await import(${JSON.stringify(pathToFileURL(join(process.cwd(), 'dist/workflows/file-digests.js')).href)});
      keepHeapSmall();
      const digests = await startFileDigests([${JSON.stringify(join(dir, 'there.txt'))}]);
      const keep = [];
      let most = 0;
      for (let round = 0; round < 300; round++) {
        const objects = [];
        for (let i = 0; i < 20000; i++) objects.push({ i, s: 'x' + i });
        keep.push(objects);
        if (keep.length > 20) keep.shift();
        most = Math.max(most, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
      }
      await digests.result();
      console.log(most);
    `;
    writeFileSync(join(dir, 'pace.mjs'), script);
    const most = Number(execFileSync(process.execPath, [join(dir, 'pace.mjs')], { encoding: 'utf8' }).trim());
    // V8's default lets it grow to 32 MB; keepHeapSmall keeps it at the 1 or 2 MB it starts with.
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(4 << 20);
  });
});
