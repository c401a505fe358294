// Authenticode for the commands: the trust store from disk (--trust-store).
import { resolve } from 'node:path';
import { parseTrustStore } from '../authenticode/authenticode.js';
import { readInputFile } from './files.js';
import { displayPath } from './input-paths.js';

/** The text of a PEM trust store and how messages name it; undefined when no path is given. */
function readTrustStore(path: string | undefined): { pem: string; shown: string } | undefined {
  if (!path) return undefined;
  const shown = displayPath(resolve(path));
  return { pem: readInputFile(resolve(path), shown).toString('utf8'), shown };
}

/**
 * `--trust-store` for a scan: the PEM text and its name, checked here (an unreadable store fails before any file
 * is read) and parsed again in each worker thread.
 */
export function loadTrustStoreText(path: string | undefined): { pem: string; shown: string } | undefined {
  const store = readTrustStore(path);
  if (store) parseTrustStore(store.pem, store.shown);
  return store;
}
