// Safe extraction of a result package into the destination folder. Every check runs before the first write:
// entry names (no absolute paths, `..`, drive letters, symlinks, names Windows cannot hold), duplicates as
// Windows compares names, a file and a folder of one name, files in the way. Each file is written to a
// temporary name and renamed. Files the user did not send are never mixed with the signed ones: they go
// into a folder of their own and are reported.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { SignGateError, UsageError } from '../core/errors.js';
import { readZip, type ZipLimits } from '../zip/read-zip.js';
import { writeFileAtomic } from './files.js';
import { SIGNING_LOG } from '../core/upload-names.js';
import { windowsPathKey, windowsNameProblem } from '../core/windows-names.js';

/** Where files that were not uploaded go, below the destination. */
export const FROM_SERVICE_FOLDER = 'from-service';

export interface ExtractOptions {
  /** Names (relative, `/`) that were uploaded; undefined when not known (then every entry is written at its path). */
  readonly expected?: ReadonlySet<string>;
  /** Overwrite existing files that are not among the uploaded ones. */
  readonly force: boolean;
  /** The name the service's signing-log.txt gets in the destination. */
  readonly logName: string;
  readonly limits?: ZipLimits;
}

export interface ExtractedFile {
  /** The entry's name in the package (`/`). */
  readonly name: string;
  /** Where it was written. */
  readonly path: string;
  readonly bytes: Uint8Array;
}

export interface ExtractResult {
  /** Entries that match an uploaded name (or every file entry, when no names were given). */
  readonly files: readonly ExtractedFile[];
  /** Entries the user did not send, written under `from-service/` and not verified. */
  readonly extras: readonly ExtractedFile[];
  /** The service's log, when the package had one. */
  readonly log: ExtractedFile | undefined;
}

function refuse(message: string): SignGateError {
  return new SignGateError('SG_ERR_HTTP_BAD_RESPONSE', `${message}; nothing was extracted`);
}

/** A result package read and checked, nothing written yet: `writePackage` writes it. */
export interface PackagePlan extends ExtractResult {
  readonly root: string;
}

/**
 * Extracts everything or nothing: readPackage, then writePackage.
 * @throws SignGateError SG_ERR_HTTP_BAD_RESPONSE for an unsafe or damaged package; UsageError for a file in the way
 */
export async function extractPackage(zipPath: string, destination: string, options: ExtractOptions): Promise<ExtractResult> {
  const plan = await readPackage(zipPath, destination, options);
  writePackage(plan);
  return plan;
}

/**
 * Reads a result package and runs every check of its names against the destination; writes nothing, so that the
 * caller can check the bytes too (sign: against the signature record) before `writePackage`.
 * @throws SignGateError SG_ERR_HTTP_BAD_RESPONSE for an unsafe or damaged package; UsageError for a file in the way
 */
export async function readPackage(zipPath: string, destination: string, options: ExtractOptions): Promise<PackagePlan> {
  const entries = await readZip(readFileSync(zipPath), options.limits);
  const root = resolve(destination);
  const expected = options.expected ? new Map([...options.expected].map((n) => [windowsPathKey(n), n])) : undefined;
  const seen = new Map<string, string>();
  const folders = new Set<string>();
  const planned = entries.map((e) => {
    const problem = windowsNameProblem(e.name);
    if (problem) throw refuse(`the package entry ${JSON.stringify(e.name)} ${problem}`);
    const key = windowsPathKey(e.name);
    const earlier = seen.get(key);
    if (earlier !== undefined) throw refuse(`the package holds ${JSON.stringify(earlier)} and ${JSON.stringify(e.name)}, the same file on Windows`);
    seen.set(key, e.name);
    const segments = key.split('/');
    for (let i = 1; i < segments.length; i++) folders.add(segments.slice(0, i).join('/'));
    const isLog = !expected?.has(key) && key === windowsPathKey(SIGNING_LOG);
    const kind: 'file' | 'extra' | 'log' = isLog ? 'log' : !expected || expected.has(key) ? 'file' : 'extra';
    const name = kind === 'log' ? options.logName : kind === 'extra' ? `${FROM_SERVICE_FOLDER}/${e.name}` : e.name;
    const path = resolve(root, ...name.split('/'));
    // The names were checked above; this is the last line of defence.
    const rel = relative(root, path);
    if (rel === '' || rel.startsWith('..') || rel.split(sep).includes('..'))
      throw refuse(`the package entry ${JSON.stringify(e.name)} would land outside ${root}`);
    return { name: e.name, path, bytes: e.bytes, kind };
  });
  const clash = [...seen.keys()].find((k) => folders.has(k));
  if (clash) throw refuse(`the package holds ${JSON.stringify(seen.get(clash))} both as a file and as a folder`);
  const inTheWay = planned.filter((p) => p.kind === 'file' && !expected && existsSync(p.path));
  if (inTheWay.length && !options.force) {
    throw new UsageError(
      `${inTheWay.length} file(s) in ${root} would be overwritten by a job whose files are not recorded here: ${inTheWay.map((p) => p.name).join(', ')}`,
      'Choose another --destination-path, or pass --force to overwrite them.',
    );
  }
  const strip = ({ name, path, bytes }: (typeof planned)[number]): ExtractedFile => ({ name, path, bytes });
  return {
    root,
    files: planned.filter((p) => p.kind === 'file').map(strip),
    extras: planned.filter((p) => p.kind === 'extra').map(strip),
    log: planned.filter((p) => p.kind === 'log').map(strip)[0],
  };
}

/** Writes a package `readPackage` checked: each file through a temporary name, then renamed. */
export function writePackage(plan: PackagePlan): void {
  mkdirSync(plan.root, { recursive: true });
  for (const p of [...plan.files, ...plan.extras, ...(plan.log ? [plan.log] : [])]) {
    mkdirSync(dirname(p.path), { recursive: true });
    writeFileAtomic(p.path, p.bytes);
  }
}
