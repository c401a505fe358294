// Authenticode for the commands: the trust store from disk (--trust-store).
import type { X509Certificate } from 'node:crypto';
import { resolve } from 'node:path';
import { parseTrustStore } from '../authenticode/authenticode.js';
import { displayPath, readInputFile } from './files.js';

/** The text of a PEM trust store and how messages name it; undefined when no path is given. */
function readTrustStore(path: string | undefined): { pem: string; shown: string } | undefined {
  if (!path) return undefined;
  const shown = displayPath(resolve(path));
  return { pem: readInputFile(resolve(path), shown).toString('utf8'), shown };
}

/** Reads a PEM trust store (`--trust-store`), or returns undefined when no path is given; errors name the file. */
export function loadTrustStore(path: string | undefined): X509Certificate[] | undefined {
  const store = readTrustStore(path);
  return store && parseTrustStore(store.pem, store.shown);
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
