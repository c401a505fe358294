// The pipeline's first stage after the settings: the inputs (folders, files, globs) expanded into files and read
// with their upload names: held in memory, into shared memory for worker threads, or on demand (each time their
// bytes are asked for) when they are larger together than readAtOnceBytes; and the vendor attribute types that the
// vendor API assemblies among them and the references declare.
import type { EngineInput } from '../../engine/index.js';
import { buildFolders } from '../build-folders.js';
import { readInputs } from '../files.js';
import { expandInputs } from '../input-paths.js';
import { checkThreads } from '../pool-thresholds.js';
import type { PreparedSettings } from './settings.js';
import { withDeclaredVendorAttributes } from './vendor-attributes.js';

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
  /** True when the inputs are files the engine reads when it needs them (see CheckOptions.readAtOnceBytes). */
  readonly onDemand: boolean;
  readonly root: string | null;
}

/** The settings, and the inputs read with their upload names. */
export interface PreparedCheck extends PreparedSettings, ReadFiles {}

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
  const { inputs, onDemand } = readInputs(files, source.root, { ...read, threads, readAtOnceBytes: source.readAtOnceBytes });
  const filesRead = { inputs, threads, onDemand, root: source.root };
  if (!prepared) return filesRead;
  const settings = { ...withDeclaredVendorAttributes(prepared.settings, prepared.references), inputFolders: buildFolders(files) };
  return { ...prepared, ...filesRead, settings };
}
