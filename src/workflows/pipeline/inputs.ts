// The pipeline's first stage after the settings: the inputs (folders, files, globs) expanded into files and read
// with their upload names: held in memory, into shared memory for worker threads, or on demand (each time their
// bytes are asked for) when they are larger together than readAtOnceBytes; and the vendor attribute types that the
// vendor API assemblies among them and the references declare.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UsageError } from '../../core/errors.js';
import { compileNamePatterns } from '../../rules/name-pattern.js';
import type { CheckSettings } from '../../rules/types.js';
import { readInput, type EngineInput } from '../../engine/index.js';
import { declaredInAssembly } from '../../rules/vendor-attribute.js';
import { buildFolders } from '../build-folders.js';
import { displayPath, expandInputs, fileOnDemand, readInputFile, type InputFile } from '../files.js';
import { checkThreads } from '../pool-thresholds.js';
import { DEFAULT_READ_AT_ONCE_BYTES, type PreparedSettings } from './settings.js';

/** Files to read with the root folder of their upload names: what `audit --verify-report` reads, with no settings. */
export interface FileSource {
  readonly paths: readonly string[];
  /** An absolute folder, or null for upload names that are file names. */
  readonly root: string | null;
  /** See CheckOptions.threads and CheckOptions.readAtOnceBytes. */
  readonly threads?: number | undefined;
  readonly readAtOnceBytes?: number | undefined;
}

/** How the inputs may be read: for worker threads (`forPool`), on demand when the set is large (`onDemand`). */
export interface ReadChoice {
  readonly forPool?: boolean;
  readonly onDemand?: boolean;
}

/** The inputs read with their upload names. */
export interface ReadFiles {
  /** Held (bytes in hand, or in shared memory), or files the engine reads when it needs them. */
  readonly inputs: EngineInput[];
  /** Worker threads for the per-file work, decided once for these inputs (see checkThreads). */
  readonly threads: number;
  /** True when the inputs are read on demand (see CheckOptions.readAtOnceBytes): check them in rounds. */
  readonly onDemand: boolean;
  readonly root: string | null;
}

/** The settings, and the inputs read with their upload names. */
export interface PreparedCheck extends PreparedSettings, ReadFiles {}

/** How readCheckInputs reads: into memory, into shared memory for worker threads, or each time asked (held nowhere). */
export type InputReading = 'memory' | 'shared' | 'on-demand';

/**
 * How `check` and `audit` read `files`: shared memory for a pool, on demand in the calling thread when they are
 * larger together than `readAtOnceBytes` (their sizes are taken from the file system), else into memory.
 * @throws RangeError for a `readAtOnceBytes` that is negative or not a number
 */
export function inputReading(files: readonly InputFile[], threads: number, readAtOnceBytes = DEFAULT_READ_AT_ONCE_BYTES): InputReading {
  if (!(readAtOnceBytes >= 0)) throw new RangeError(`readAtOnceBytes must be a number of bytes of at least 0, not ${readAtOnceBytes}`);
  if (threads > 0) return 'shared';
  let total = 0;
  for (const f of files) {
    total += statSafeSize(f.absolutePath);
    if (total > readAtOnceBytes) return 'on-demand';
  }
  return 'memory';
}

/** A file's size, or 0 when it cannot be stat'ed (the read that follows says why). */
function statSafeSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Expands `source.paths` (netmodules included: the rules read them) and reads the files: into shared memory when
 * `read.forPool` and worker threads will run (see checkThreads), on demand when `read.onDemand` and they are larger
 * together than `readAtOnceBytes` (see inputReading), else into memory. With the `prepared` settings of the options,
 * returns them too, with the vendor attribute types that the vendor API assemblies among the inputs and its
 * references declare (see withDeclaredVendorAttributes), and the folders that hold the inputs (see buildFolders).
 * @throws UsageError for a file outside the root or a reference that does not exist; SignGateError SG_ERR_NO_INPUT /
 * SG_ERR_IO_READ
 */
export async function readFiles(source: FileSource, read: ReadChoice, prepared: PreparedSettings): Promise<PreparedCheck>;
export async function readFiles(source: FileSource, read?: ReadChoice, prepared?: PreparedSettings): Promise<ReadFiles>;
export async function readFiles(source: FileSource, read: ReadChoice = {}, prepared?: PreparedSettings): Promise<ReadFiles | PreparedCheck> {
  const files = await expandInputs(source.paths, process.cwd(), { netmodules: true });
  const threads = checkThreads(files.length, source.threads);
  const reading = read.forPool === true && threads > 0 ? 'shared' : read.onDemand === true ? inputReading(files, 0, source.readAtOnceBytes) : 'memory';
  const inputs = readCheckInputs(files, source.root, reading);
  const filesRead = { inputs, threads, onDemand: reading === 'on-demand', root: source.root };
  if (!prepared) return filesRead;
  const settings = { ...withDeclaredVendorAttributes(prepared.settings, inputs, prepared.references), inputFolders: buildFolders(files) };
  return { ...prepared, ...filesRead, settings };
}

/**
 * The settings with the vendor attribute types that vendor API assemblies declare, so messages name it exactly: those
 * among the inputs, then those of `references` (files, or folders to take the DLLs whose names match the vendor API
 * patterns from), read only for that. A reference that cannot be read is passed over: it only sharpens a hint.
 * @throws UsageError SG_ERR_USAGE for a reference that does not exist
 */
export function withDeclaredVendorAttributes(settings: CheckSettings, inputs: readonly EngineInput[], references: readonly string[]): CheckSettings {
  const isVendorApi = compileNamePatterns(settings.vendorApi);
  const vendorApi = (path: string) => /\.dll$/i.test(path) && isVendorApi(basename(path).replace(/\.dll$/i, ''));
  const referenced = references.flatMap((r) => {
    const path = resolve(r);
    if (!existsSync(path)) throw new UsageError(`the reference ${displayPath(path)} does not exist`, 'Name the vendor API assembly (or its folder) that the add-in compiles against.');
    return statSync(path).isDirectory() ? readdirSync(path).filter(vendorApi).map((n) => join(path, n)) : [path];
  });
  const declared = [...inputs.filter((i) => vendorApi(i.path)).flatMap((i) => declaredInAssembly(() => readInput(i), settings)), ...referenced.flatMap((file) => declaredInAssembly(() => readFileSync(file), settings))];
  return declared.length ? { ...settings, declaredVendorAttributes: declared } : settings;
}

/**
 * Reads `files` as check inputs: each upload name is the path below `root` (`/`-separated), or the file name
 * without a root. `shared` reads them into shared memory for worker threads; `on-demand` only takes their sizes,
 * and the engine reads each file when a task needs it (see fileOnDemand).
 * @throws UsageError for a file outside `root`; SignGateError SG_ERR_IO_READ
 */
export function readCheckInputs(files: readonly InputFile[], root: string | null, reading: InputReading = 'memory'): EngineInput[] {
  return files.map((f) => {
    let uploadName = basename(f.absolutePath);
    if (root) {
      const rel = relative(root, f.absolutePath);
      if (rel.startsWith('..') || isAbsolute(rel)) throw new UsageError(`${f.displayPath} is outside the root folder ${displayPath(root)}`, 'Pass a --root that contains every file, or leave --root out.');
      uploadName = rel.split(sep).join('/');
    }
    if (reading !== 'on-demand') return { path: f.displayPath, uploadName, bytes: readInputFile(f.absolutePath, f.displayPath, reading === 'shared'), explicit: f.explicit };
    const file = fileOnDemand(f.absolutePath, f.displayPath);
    return { path: f.displayPath, uploadName, explicit: f.explicit, size: file.size, read: file.read };
  });
}

