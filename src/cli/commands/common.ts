// Helpers shared by command handlers: reading key files and key maps with the file name in every error.
import { KeyError, SignGateError } from '../../core/errors.js';
import { parseStrongNameKeyFile, type StrongNameKeyFile } from '../../strongname/key-blob.js';
import { parseMonoKeyMap } from '../../strongname/key-map.js';
import { displayPath, readInputFile } from '../files.js';
import { resolve } from 'node:path';

export interface CommonArgs {
  verbose: boolean;
}

/** Reads and parses a .snk file; errors name the file and say what was expected. */
export function loadKeyFile(path: string): StrongNameKeyFile {
  const shown = displayPath(resolve(path));
  const bytes = readInputFile(resolve(path), shown);
  try {
    return parseStrongNameKeyFile(bytes);
  } catch (error) {
    if (error instanceof SignGateError) {
      throw new KeyError(error.code, `${shown}: ${error.message}`, { cause: error, file: shown });
    }
    throw error;
  }
}

/** Reads a Mono machine.config into a key map, or returns undefined when no path is given. */
export function loadKeyMap(path: string | undefined): Map<string, Uint8Array> | undefined {
  if (!path) return undefined;
  const shown = displayPath(resolve(path));
  return parseMonoKeyMap(readInputFile(resolve(path), shown).toString('utf8'));
}
