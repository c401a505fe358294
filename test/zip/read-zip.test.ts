// readZip's entry limit counts every entry, folders too: an archive of a few files hidden among many folder entries
// is refused like one of many files (the service's 5,000 and the client's limits).
import { describe, expect, test } from 'vitest';
import { readZip, ZipRefusal } from '../../src/zip/read-zip.js';
import { buildZip } from '../helpers/hostile-zip.js';

describe('readZip entry limit', () => {
  test('folder entries count: 10 folders and 1 file over a limit of 5 are refused; 3 folders and 1 file are read', async () => {
    const folders = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `d${i}/`, data: new Uint8Array(0) }));
    const file = { name: 'A.dll', data: Buffer.from('MZ') };
    const refused = await readZip(buildZip([...folders(10), file]), { maxEntries: 5, maxTotalBytes: 1 << 20 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ZipRefusal);
    expect((refused as ZipRefusal).message).toContain('more than 5 entries (folders count)');
    const read = await readZip(buildZip([...folders(3), file]), { maxEntries: 5, maxTotalBytes: 1 << 20 });
    expect(read.map((e) => e.name)).toEqual(['A.dll']);
  });
});
