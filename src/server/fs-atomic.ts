// Small file helpers for the service's data directory: every write goes to a temporary name, then a rename.
import { randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';

export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const temp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
  writeFileSync(temp, data);
  renameSync(temp, path);
}

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
  await writeFile(temp, data);
  await rename(temp, path);
}
