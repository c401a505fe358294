// Small file helpers for the service's data directory: every write goes to a temporary name, then a rename;
// files are readable by the service's user only (0600) and folders are made 0700.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';

/** Mode of every file the service writes: its data may hold token hashes, uploads and signed files. */
export const PRIVATE_FILE = 0o600;
export const PRIVATE_DIR = 0o700;

/** mkdir -p whose new folders are 0700. */
export function mkdirPrivateSync(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR });
}

/**
 * Makes `path` a folder that only its owner may enter (0700): new, or narrowed when it is there with more
 * (POSIX; Windows keeps its ACLs). A folder we may not change is left as it is.
 */
export function narrowDirSync(path: string): void {
  mkdirPrivateSync(path);
  if (process.platform === 'win32') return;
  try {
    if (statSync(path).mode & 0o077) chmodSync(path, PRIVATE_DIR);
  } catch {
    // not ours to change: the files in it are 0600 all the same
  }
}

export async function mkdirPrivate(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: PRIVATE_DIR });
}

export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const temp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
  writeFileSync(temp, data, { mode: PRIVATE_FILE });
  renameSync(temp, path);
}

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const temp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
  await writeFile(temp, data, { mode: PRIVATE_FILE });
  await rename(temp, path);
}
