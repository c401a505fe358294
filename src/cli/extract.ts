// Safe extraction of a result package into the destination folder: every entry is checked by the ZIP
// reader (no absolute paths, `..`, drive letters or symlinks; capped count and size), each file is written
// to a temporary name and renamed, and an existing file that is not one of the files being signed is
// overwritten only when the caller says so (--force).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { UsageError } from '../core/errors.js';
import { readZip, type ZipLimits } from '../zip/read-zip.js';
import { writeFileAtomic } from './files.js';

export interface ExtractOptions {
  /** Names (relative, `/`) that this run signs: they may replace what is in the destination. */
  readonly expected: ReadonlySet<string>;
  /** Overwrite any existing file. */
  readonly force: boolean;
  /** The name the signing log gets in the destination. */
  readonly logName: string;
  readonly limits?: ZipLimits;
}

export interface ExtractedFile {
  readonly name: string;
  readonly path: string;
  readonly bytes: Uint8Array;
}

/**
 * Extracts everything or nothing: all checks run before the first file is written.
 * @throws SignGateError SG_ERR_HTTP_BAD_RESPONSE for an unsafe or damaged package; UsageError for a file in the way
 */
export async function extractPackage(zipPath: string, destination: string, options: ExtractOptions): Promise<ExtractedFile[]> {
  const entries = await readZip(readFileSync(zipPath), options.limits);
  const root = resolve(destination);
  const planned = entries.map((e) => {
    const name = e.name === 'signing-log.txt' ? options.logName : e.name;
    const path = resolve(root, ...name.split('/'));
    // readZip refused unsafe names; this is the last line of defence.
    const rel = relative(root, path);
    if (rel.startsWith('..') || rel.split(sep).includes('..')) throw new UsageError(`the package entry ${JSON.stringify(e.name)} would land outside ${root}`);
    return { name, path, bytes: e.bytes };
  });
  const expectedLower = new Set([...options.expected].map((n) => n.toLowerCase()));
  const inTheWay = planned.filter((p) => existsSync(p.path) && !expectedLower.has(p.name.toLowerCase()) && p.name !== options.logName);
  if (inTheWay.length && !options.force) {
    throw new UsageError(
      `${inTheWay.length} file(s) in ${root} are not among the files being signed and would be overwritten: ${inTheWay.map((p) => p.name).join(', ')}`,
      'Choose another --destination-path, or pass --force to overwrite them.',
    );
  }
  mkdirSync(root, { recursive: true });
  for (const p of planned) {
    mkdirSync(dirname(p.path), { recursive: true });
    writeFileAtomic(p.path, p.bytes);
  }
  return planned.map((p) => ({ name: p.name, path: p.path, bytes: p.bytes }));
}

