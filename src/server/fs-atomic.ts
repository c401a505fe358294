// Small file helpers for the service's data directory: every write goes to a temporary name, then a rename;
// files are readable by the service's user only (0600) and folders are made 0700.
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

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

/**
 * Takes a job's folder out of sight in one rename into `tmpDir` (a worker still writing into it finds it gone);
 * the trash path, or undefined when the folder is gone already. The caller removes the trash.
 */
export async function moveToTrash(tmpDir: string, dir: string, id: string): Promise<string | undefined> {
  const trash = join(tmpDir, `deleted--${id}--${randomUUID()}`);
  try {
    await rename(dir, trash);
    return trash;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The file's bytes, or undefined when it does not exist. */
export async function readIfPresent(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
