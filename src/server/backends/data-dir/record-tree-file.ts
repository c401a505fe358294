// The stored hashes of a data directory's signature record: <data-dir>/signature-record.tree, 32 bytes per hash in
// Go tlog's order (record/stored-tree.ts). It is derived from the record and need not survive a crash: a hash
// file cut off, or one whose last leaf is not the record's (the RecordLog compares them at a start), is written
// again. Only the service's process writes it; it reads a hash by its place, never the file whole.
import { closeSync, openSync, readSync } from 'node:fs';
import { open, stat, truncate, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Hash } from '../../../record/merkle.js';
import { PRIVATE_FILE } from '../../fs-atomic.js';
import type { RecordTreeHashes } from '../../ports.js';

export const RECORD_TREE_FILE = 'signature-record.tree';
const HASH_BYTES = 32;

export class RecordTreeFile implements RecordTreeHashes {
  readonly path: string;

  constructor(dataDir: string) {
    this.path = join(dataDir, RECORD_TREE_FILE);
  }

  async count(): Promise<number> {
    try {
      return Math.floor((await stat(this.path)).size / HASH_BYTES);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
  }

  /** Reads the hashes with one blocking read each: 32 bytes from the page cache cost less than a round through the thread pool. */
  async read(indexes: readonly number[]): Promise<Hash[]> {
    if (indexes.length === 0) return [];
    const fd = openSync(this.path, 'r');
    try {
      return indexes.map((index) => {
        const hash = Buffer.alloc(HASH_BYTES);
        if (readSync(fd, hash, 0, HASH_BYTES, index * HASH_BYTES) !== HASH_BYTES)
          throw new Error(`hash ${index} of the record's tree is not stored in ${this.path}`);
        return hash;
      });
    } finally {
      closeSync(fd);
    }
  }

  async write(at: number, hashes: readonly Hash[]): Promise<void> {
    let file: FileHandle;
    try {
      file = await open(this.path, 'r+');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      file = await open(this.path, 'w+', PRIVATE_FILE);
    }
    try {
      const size = (await file.stat()).size;
      if (size < at * HASH_BYTES)
        throw new Error(`the record's tree ${this.path} holds ${Math.floor(size / HASH_BYTES)} hashes, not the ${at} written before these`);
      // Whatever lies past `at` (a write a crash cut off) is written over.
      if (size > at * HASH_BYTES) await file.truncate(at * HASH_BYTES);
      await file.write(Buffer.concat(hashes), 0, hashes.length * HASH_BYTES, at * HASH_BYTES);
    } finally {
      await file.close();
    }
  }

  async reset(): Promise<void> {
    await truncate(this.path, 0).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}
