// The files the user names: files, folders and glob patterns expanded into the files they stand for, each known by
// what it is on disk (not by how it was named) and shown relative to the working directory.
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UsageError } from '../core/errors.js';

export interface InputFile {
  /** How the file is shown: relative to the working directory, with `/` separators. */
  readonly displayPath: string;
  readonly absolutePath: string;
  /** True when the file was named itself, not found in a folder or by a glob. */
  readonly explicit: boolean;
}

const ASSEMBLY_EXTENSION = /\.(dll|exe)$/i;
/** With netmodules: a multi-module assembly's other modules, checked and uploaded with it. */
const MODULE_EXTENSION = /\.(dll|exe|netmodule)$/i;

export interface ExpandOptions {
  /** Folders stand for their *.netmodule files too (the pre-flight check, which links them to their assembly). */
  readonly netmodules?: boolean;
  /** Folders stand for every file below them, not only assemblies (an archive of a whole build output). */
  readonly everyFile?: boolean;
}

const ANY_FILE = /(?:)/;

/** `/`-separated path relative to `cwd` when inside it, else absolute with `/`. */
export function displayPath(absolutePath: string, cwd = process.cwd()): string {
  // POSIX paths compare byte for byte: a path that does not start with the folder is outside it, and is shown
  // absolute without path.relative (30 ms over the first few thousand files of a scan). Windows compares names
  // case-insensitively and across drives, so there path.relative decides.
  if (sep === '/' && isPlainAbsolute(absolutePath) && isPlainAbsolute(cwd) && cwd !== '/' && !absolutePath.startsWith(`${cwd}/`) && absolutePath !== cwd) {
    return absolutePath;
  }
  const rel = relative(cwd, absolutePath);
  const shown = rel === '' ? basename(absolutePath) : rel.startsWith('..') || isAbsolute(rel) ? absolutePath : rel;
  return shown.split(sep).join('/');
}

const DOT_PART = /\/\.\.?(\/|$)/;

/** An absolute POSIX path with nothing for path.relative to normalize: no `.` or `..` part, no `//`, no trailing `/`. */
function isPlainAbsolute(path: string): boolean {
  return path.startsWith('/') && !DOT_PART.test(path) && !path.includes('//') && (path.length === 1 || !path.endsWith('/'));
}

function hasGlobMagic(pattern: string): boolean {
  return /[*?[\]{}]/.test(pattern);
}

/**
 * Every file below `folder` whose name matches `pattern`, skipping dot-folders and dot-files and not following folder
 * links, with its identity (see fileIdentity). The real path of a plain file is its folder's real path and its name
 * as the folder lists it: only the folder's and each linked file's are asked of the file system (one call per file
 * cost about 15 ms per thousand files).
 */
function assembliesBelow(folder: string, pattern: RegExp): { path: string; identity: string }[] {
  const out: { path: string; identity: string }[] = [];
  const walk = (dir: string, real: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      if (entry.isDirectory()) walk(join(dir, entry.name), join(real, entry.name));
      else if (entry.isFile() && pattern.test(entry.name)) out.push({ path: join(dir, entry.name), identity: join(real, entry.name) });
      else if (entry.isSymbolicLink() && pattern.test(entry.name)) {
        const path = join(dir, entry.name);
        out.push({ path, identity: fileIdentity(path) });
      }
    }
  };
  walk(folder, fileIdentity(folder));
  return out;
}

/**
 * Expands files, folders (every *.dll and *.exe below, any letter case; *.netmodule too with `netmodules`; every file
 * with `everyFile`) and glob patterns.
 * Results are unique (case-insensitively on Windows) and sorted by display path.
 * @throws UsageError SG_ERR_NO_INPUT when an input matches nothing
 */
export async function expandInputs(inputs: readonly string[], cwd = process.cwd(), options: ExpandOptions = {}): Promise<InputFile[]> {
  // Keyed by what the file is, not by how it was named: two names of one file (another case on Windows, `..`,
  // a symbolic link, a junction, an 8.3 name) are one input, and two files are two, whatever their names.
  const found = new Map<string, InputFile>();
  const add = (absolutePath: string, explicit = false, key = fileIdentity(absolutePath)) => {
    const previous = found.get(key);
    found.set(
      key,
      previous ? { ...previous, explicit: explicit || previous.explicit } : { absolutePath, displayPath: displayPath(absolutePath, cwd), explicit },
    );
  };
  for (const input of inputs) {
    const absolute = resolve(cwd, input);
    let stat: ReturnType<typeof statSync> | undefined;
    try {
      stat = statSync(absolute);
    } catch {
      stat = undefined;
    }
    if (stat?.isDirectory()) {
      assembliesBelow(absolute, options.everyFile ? ANY_FILE : options.netmodules ? MODULE_EXTENSION : ASSEMBLY_EXTENSION).forEach((a) =>
        add(a.path, false, a.identity),
      );
      continue;
    }
    if (stat) {
      add(absolute, true);
      continue;
    }
    if (hasGlobMagic(input)) {
      // glob is loaded only for patterns: folders and files, the common case, start faster without it.
      const { glob } = await import('glob');
      const matches = await glob(input.split('\\').join('/'), { cwd, nodir: true, absolute: true, nocase: true, windowsPathsNoEscape: true });
      if (matches.length === 0)
        throw new UsageError(
          `no file matches ${JSON.stringify(input)}`,
          'Check the pattern; quote it so that the shell does not expand it.',
          'SG_ERR_NO_INPUT',
        );
      matches.forEach((m) => add(m));
      continue;
    }
    throw new UsageError(
      `${JSON.stringify(input)} does not exist`,
      'Pass an existing file, a folder or a glob pattern such as "bin/Release/**/*.dll".',
      'SG_ERR_NO_INPUT',
    );
  }
  return [...found.values()].sort((a, b) => (a.displayPath < b.displayPath ? -1 : a.displayPath > b.displayPath ? 1 : 0));
}

/**
 * The error for inputs that name no assembly at all (an empty folder): SG_ERR_NO_INPUT, as an input that matches
 * nothing, naming them (relative to `cwd`) and what to name instead.
 */
export function noAssembliesError(paths: readonly string[], cwd = process.cwd()): UsageError {
  const shown = paths.map((p) => displayPath(resolve(cwd, p), cwd));
  return new UsageError(
    `${shown.join(', ')} ${shown.length === 1 ? 'holds' : 'hold'} no .dll or .exe file`,
    "Name the add-in's build output (for example bin/Release) or its assemblies; a folder stands for every *.dll and *.exe below it.",
    'SG_ERR_NO_INPUT',
  );
}

/**
 * What a file is, as the file system says: its real path (`realpath`; on Windows GetFinalPathNameByHandle, which
 * resolves `..`, links, junctions, 8.3 names and the case the name has on disk). Two hard links stay two inputs:
 * they are two names in the output, each uploaded and returned. A path that cannot be resolved stands for itself.
 */
export function fileIdentity(absolutePath: string): string {
  try {
    return realpathSync.native(absolutePath);
  } catch {
    return absolutePath;
  }
}
