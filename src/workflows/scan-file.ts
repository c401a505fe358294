// What `inspect` and `verify` make of one file: the record each prints, read from the file's path. Used in the
// calling thread or in a scan pool thread (scan-thread.ts) alike, so that both give the same records.
import type { X509Certificate } from 'node:crypto';
import { parseTrustStore } from '../authenticode/authenticode.js';
import { authenticodeOf, describeAuthenticodeVerdict, type AuthenticodeVerdict } from '../authenticode/verdict.js';
import { SignGateError } from '../core/errors.js';
import { inspectAssembly, type AssemblyInfo } from '../strongname/assembly-info.js';
import { readModule } from '../strongname/well-formed.js';
import type { PublicKeyInfo } from '../strongname/key-blob.js';
import { verifyStrongName } from '../strongname/strong-name.js';
import { readInputFile, readInputFileInto } from './files.js';

/** A file to scan: where it is, and how the output names it. */
export interface ScanInput {
  readonly absolutePath: string;
  readonly displayPath: string;
}

/** How files are scanned; plain data, so that it can be handed to a worker thread. */
export interface ScanSettings {
  /** inspect: verify signatures cryptographically (default true). */
  readonly verify?: boolean;
  /** Keys to verify with instead of the assembly's own, by token (Mono's machine.config map). */
  readonly keyMap?: ReadonlyMap<string, Uint8Array>;
  /** verify: the key the signature must be made with. */
  readonly expectedKey?: PublicKeyInfo;
  /** verify: check the Authenticode signature too (implied by trustStore); inspect: false skips it (default true). */
  readonly authenticode?: boolean;
  /** The PEM text of `--trust-store` and how messages name it: Authenticode chains must reach one of its certificates. */
  readonly trustStore?: { readonly pem: string; readonly shown: string };
}

/** The trust store's certificates, parsed once per thread (settings cross to worker threads as plain text). */
let parsedTrustStore: { pem: string; certificates: X509Certificate[] } | undefined;
function trustStoreOf(settings: ScanSettings): X509Certificate[] | undefined {
  if (!settings.trustStore) return undefined;
  if (parsedTrustStore?.pem !== settings.trustStore.pem)
    parsedTrustStore = { pem: settings.trustStore.pem, certificates: parseTrustStore(settings.trustStore.pem, settings.trustStore.shown) };
  return parsedTrustStore.certificates;
}

/** One line of `signgate verify`. */
export interface VerifyRecord {
  path: string;
  valid: boolean;
  state: string | null;
  publicKeyToken: string | null;
  keyBits: number | null;
  hashAlgorithm: string | null;
  reason: string | null;
  error: { code: string; message: string } | null;
  /** With --authenticode: the file's Authenticode signature beside its strong name. */
  authenticode?: AuthenticodeVerdict;
}

/**
 * The buffer the next file is read into, one per thread: a new buffer per file (167 MB over the Mono corpus) costs
 * page faults and garbage collection. Nothing made from a file may keep a view of its bytes: the inspect record
 * holds only strings and numbers, and the caches of keys and certificates keep copies
 * (test/workflows/scan-read-buffer.test.ts).
 */
let spare: Buffer | undefined;
/** The largest buffer kept for the next file: a thread holds no more than this between files. */
const SPARE_BYTES = 32 * 1024 * 1024;

/** The inspect record of one file; a file that cannot be read becomes a record with its error. */
export function inspectFile(file: ScanInput, settings: ScanSettings = {}): AssemblyInfo {
  let bytes: Buffer;
  try {
    bytes = readInputFileInto(file.absolutePath, file.displayPath, spare);
  } catch (error) {
    const e = error as { code: string; message: string };
    return {
      path: file.displayPath,
      size: 0,
      managed: false,
      error: { code: e.code, message: e.message },
      pe: null,
      cli: null,
      module: null,
      assembly: null,
      strongName: null,
      attributes: [],
      references: [],
      authenticode: null,
    };
  }
  const trustStore = trustStoreOf(settings);
  const record = inspectAssembly(bytes, file.displayPath, {
    verify: settings.verify ?? true,
    ...(settings.authenticode === false ? { readAuthenticode: false } : {}),
    ...(settings.keyMap ? { keyMap: settings.keyMap } : {}),
    ...(trustStore ? { authenticode: { trustStore } } : {}),
  });
  // A buffer of its own (the file did not fit in the one before): the next files are read into it.
  if (bytes.buffer !== spare?.buffer && bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length && bytes.length <= SPARE_BYTES)
    spare = Buffer.from(bytes.buffer);
  return record;
}

/** The verify record of one file; a file that cannot be read or parsed becomes a record with its error. */
export function verifyFile(file: ScanInput, settings: ScanSettings = {}): VerifyRecord {
  trustStoreOf(settings); // a bad trust store is the command's error, before any file is read
  let bytes: Buffer;
  try {
    bytes = readInputFile(file.absolutePath, file.displayPath);
  } catch (error) {
    if (!(error instanceof SignGateError)) throw error;
    return verifyError(file.displayPath, error, undefined);
  }
  return verifyAssemblyBytes(bytes, file.displayPath, settings);
}

/**
 * What `signgate verify` makes of a file's bytes: the PE headers, the CLI header, the metadata tables, the Assembly
 * row and its public key, then the strong-name hash over the covered bytes and one RSA verification. Attributes,
 * references and type names are not read unless the key may sit in AssemblySignatureKeyAttribute (a signed file
 * with an unmapped key). A file that cannot be parsed becomes a record with its error.
 * @param path how the record names the file
 */
export function verifyAssemblyBytes(bytes: Uint8Array, path: string, settings: ScanSettings = {}): VerifyRecord {
  const trustStore = trustStoreOf(settings);
  let authenticode: AuthenticodeVerdict | undefined;
  try {
    if (settings.authenticode || trustStore) authenticode = authenticodeOf(bytes, trustStore ? { trustStore } : {}) ?? undefined;
    const module = readModule(bytes);
    const result = verifyStrongName(module, {
      ...(settings.expectedKey ? { expectedKey: settings.expectedKey } : {}),
      ...(settings.keyMap ? { keyMap: settings.keyMap } : {}),
    });
    // A precompiled (ReadyToRun) framework file: the strong name cannot vouch for it; say what does.
    const readyToRun = result.status.details.includes('ready-to-run') ? (authenticode ?? authenticodeOf(bytes) ?? undefined) : undefined;
    const reason = readyToRun && result.reason ? `${result.reason}; its Authenticode signature: ${describeAuthenticodeVerdict(readyToRun)}` : result.reason;
    return {
      path,
      valid: result.valid,
      state: result.status.state,
      publicKeyToken: result.status.publicKeyToken,
      keyBits: result.status.keyBits,
      hashAlgorithm: result.status.hashAlgorithm,
      reason,
      error: null,
      ...(authenticode ? { authenticode } : {}),
    };
  } catch (error) {
    if (!(error instanceof SignGateError)) throw error;
    return verifyError(path, error, authenticode);
  }
}

function verifyError(path: string, error: SignGateError, authenticode: AuthenticodeVerdict | undefined): VerifyRecord {
  return {
    path,
    valid: false,
    state: null,
    publicKeyToken: null,
    keyBits: null,
    hashAlgorithm: null,
    reason: null,
    error: { code: error.code, message: error.message },
    ...(authenticode ? { authenticode } : {}),
  };
}

/** A record as `inspect --json` and `verify --json` print it inside their array, with what the exit code needs. */
export interface ScanJson {
  /** JSON.stringify(record, null, 2), every line indented by two more spaces. */
  readonly json: string;
  /** The file could not be read or parsed. */
  readonly error: boolean;
  /** verify: the signature is valid; inspect: the same as !error. */
  readonly valid: boolean;
  /** verify: no Authenticode verdict asked for, or a valid (and, with a trust store, trusted) signature. */
  readonly authenticodePasses: boolean;
}

/** With --authenticode a file passes only when its Authenticode signature is valid (and trusted, with --trust-store). */
export function authenticodePasses(verdict: AuthenticodeVerdict | null | undefined): boolean {
  return !verdict || (verdict.state === 'valid' && verdict.trusted !== false);
}

/** The text of a record as an element of a JSON array printed with two-space indentation. */
export function scanJson(record: AssemblyInfo | VerifyRecord): ScanJson {
  return {
    json: JSON.stringify([record], null, 2).slice(2, -2),
    error: Boolean(record.error),
    valid: 'valid' in record ? record.valid : !record.error,
    authenticodePasses: 'valid' in record ? authenticodePasses(record.authenticode) : true,
  };
}

export const scanners = { inspect: inspectFile, verify: verifyFile } as const;
export type ScanKind = keyof typeof scanners;
export type ScanRecord<K extends ScanKind> = ReturnType<(typeof scanners)[K]>;
