// What the client checks of the service's signature record on every job: a finished job's status carries the
// job's entries with RFC 9162 inclusion proofs in a checkpoint signed by the service's record key (deploy.md,
// "Checkpoints"). The client verifies the checkpoint's signature by the expected record key (given up front with
// --record-key, else pinned in the job ledger the first time), each entry's inclusion, that the entries cover every
// file the service says it signed, and that the checkpoint continues the latest one it saw (a consistency proof);
// after the download, each returned file's SHA-256 must be its entry's signedSha256 (before anything is written).
// Only then is the new checkpoint kept.
//
// Fail closed: once a record was seen for a service (or a key is expected), a status without one is refused. A
// service that has never shown a record (an older or third-party one, the vendor's own) stays usable, and says so.
// The pin belongs to the service's identity (recordIdentity: scheme, host, port and path, normalized), not to the
// spelling of its URL.
import { createHash } from 'node:crypto';
import { noteSigners, parseCheckpoint, parseVerifierKey, formatVerifierKey, type Checkpoint, type RecordVerifier } from '../record/checkpoint.js';
import { isSignGateError, SignGateError } from '../core/errors.js';
import { leafHash, verifyConsistency, verifyInclusion } from '../record/merkle.js';
import { entryLine, type SignatureEntry } from '../record/signature-record.js';
import { windowsPathKey } from '../core/windows-names.js';
import type { ServiceClient } from '../service-client/client.js';
import { recordIdentity, type Ledger, type LedgerRecordCheckpoint } from './ledger.js';

export { recordIdentity };

interface ProofShape {
  checkpoint: string;
  entries: { entry: SignatureEntry; leafIndex: number; inclusionProof: string[] }[];
}

function shapeOf(value: unknown): ProofShape | undefined {
  const v = value as ProofShape | null;
  if (typeof v?.checkpoint !== 'string' || !Array.isArray(v.entries)) return undefined;
  for (const e of v.entries) {
    if (
      typeof e?.entry !== 'object' ||
      e.entry === null ||
      !Number.isSafeInteger(e.leafIndex) ||
      !Array.isArray(e.inclusionProof) ||
      e.inclusionProof.some((p) => typeof p !== 'string')
    )
      return undefined;
    const { file, seq, signedSha256, uploadedSha256 } = e.entry as Partial<SignatureEntry>;
    if (typeof file !== 'string' || !Number.isSafeInteger(seq) || typeof signedSha256 !== 'string' || typeof uploadedSha256 !== 'string') return undefined;
  }
  return v;
}

/** What a job's record proof established; `keep()` saves its checkpoint once the files it names were checked too (bindRecordToFiles). */
export type RecordCheck =
  | { readonly offered: false }
  | {
      readonly offered: true;
      readonly size: number;
      readonly entries: readonly SignatureEntry[];
      /** The record key's verifier text (name+keyid+key). */
      readonly key: string;
      /** How the key came to be trusted: given up front, pinned before (on `pinnedAt`), or pinned now on first use. */
      readonly trust: 'expected' | 'pinned' | 'first-use';
      readonly pinnedAt?: string;
      /** The entry of each file name (windowsPathKey of the uploaded name). */
      readonly byFile: ReadonlyMap<string, SignatureEntry>;
      readonly keep: () => void;
    };

export interface RecordProofInput {
  readonly client: ServiceClient;
  readonly ledger: Ledger;
  readonly baseUrl: string;
  readonly jobId: string;
  /** The status's signatureRecord, as it came (undefined when it carried none). */
  readonly proof: unknown;
  /** The record key the user expects (--record-key); without it, the ledger's pin or, the first time, the service's key. */
  readonly expectedKey?: RecordVerifier;
}

const entries = (n: number) => `${n} ${n === 1 ? 'entry' : 'entries'}`;

/**
 * Checks a finished job's `signatureRecord` before anything of the job is downloaded.
 * @throws SignGateError SG_ERR_RECORD_PROOF naming what was found
 */
export async function checkRecordProof(input: RecordProofInput): Promise<RecordCheck> {
  const { client, ledger, baseUrl, jobId, proof, expectedKey } = input;
  const identity = recordIdentity(baseUrl);
  const fail = (message: string): never => {
    throw new SignGateError('SG_ERR_RECORD_PROOF', `${baseUrl}: ${message}; nothing of job ${jobId} was written`);
  };
  const saved = ledger.recordCheckpoint(identity);
  if (expectedKey && saved && saved.publicKey !== formatVerifierKey(expectedKey)) {
    fail(
      `--record-key names the record key ${expectedKey.name} (key id ${expectedKey.keyId.toString('hex')}), but the job ledger ${ledger.path} pinned ${pinName(saved)} for this service on ${saved.savedAt}. If the service's operator changed its record key, remove the old pin: signgate jobs unpin-record --base-url ${identity}`,
    );
  }
  if (proof === undefined) {
    if (expectedKey)
      fail(
        `the status of job ${jobId} carries no signature record, but the record key ${expectedKey.name} is expected (--record-key); a service that keeps a record gives one with every finished job`,
      );
    if (saved)
      fail(
        `the status of job ${jobId} carries no signature record, but this service showed one (record key ${pinName(saved)}) on ${saved.savedAt}; a service that keeps a record never stops giving it: ask its operator. If the service was replaced by one without a record, remove the pin: signgate jobs unpin-record --base-url ${identity}`,
      );
    return { offered: false };
  }
  const p =
    shapeOf(proof) ?? fail(`the status of job ${jobId} has a signatureRecord that is not one (checkpoint, entries with entry, leafIndex and inclusionProof)`);
  const trust: 'expected' | 'pinned' | 'first-use' = expectedKey ? 'expected' : saved ? 'pinned' : 'first-use';
  const keyText = expectedKey ? formatVerifierKey(expectedKey) : (saved?.publicKey ?? (await client.recordPublicKey()));
  let verifier: RecordVerifier;
  try {
    verifier =
      expectedKey ??
      parseVerifierKey(keyText, `the record key of ${identity}${saved ? ` saved in the job ledger ${ledger.path}` : ' (GET /record/public-key)'}`);
  } catch (error) {
    if (isSignGateError(error)) fail(error.message);
    throw error;
  }
  // A checkpoint signed by another key only: a key change (or another service at this address), said as such.
  const signers = noteSigners(p.checkpoint);
  if (signers.length && !signers.some((s) => s.name === verifier.name && s.keyId.equals(verifier.keyId))) {
    const others = signers.map((s) => `${s.name} (key id ${s.keyId.toString('hex')})`).join(', ');
    const since =
      trust === 'expected'
        ? 'the key --record-key names'
        : trust === 'pinned'
          ? `the key pinned for it on ${saved!.savedAt}`
          : 'the key it names at /record/public-key';
    fail(
      `the checkpoint of job ${jobId} is not signed by the record key ${verifier.name} (key id ${verifier.keyId.toString('hex')}), ${since}; it is signed by ${others}: the service changed its record key, or another service answers at this address. Ask its operator whether the record key changed, and why (one deployment has one record key); if it did, remove the old pin: signgate jobs unpin-record --base-url ${identity}`,
    );
  }
  let checkpoint: Checkpoint;
  try {
    checkpoint = parseCheckpoint(p.checkpoint, verifier, `the checkpoint of job ${jobId}`);
  } catch (error) {
    if (isSignGateError(error)) fail(error.message);
    throw error;
  }
  const byFile = new Map<string, SignatureEntry>();
  for (const { entry, leafIndex, inclusionProof } of p.entries) {
    if (entry.job !== jobId) fail(`the status of job ${jobId} carries an entry of job ${String(entry.job)} (entry ${String(entry.seq)})`);
    const leaf = leafHash(Buffer.from(entryLine(entry).slice(0, -1), 'utf8'));
    if (
      leafIndex !== entry.seq - 1 ||
      !verifyInclusion(
        leaf,
        leafIndex,
        checkpoint.size,
        inclusionProof.map((h) => Buffer.from(h, 'base64')),
        checkpoint.root,
      )
    ) {
      fail(
        `entry ${String(entry.seq)} of job ${jobId} (file ${String(entry.file)}) is not in the tree of its checkpoint (${entries(checkpoint.size)}): its inclusion proof does not fit`,
      );
    }
    const key = windowsPathKey(entry.file);
    if (byFile.has(key))
      fail(`the status of job ${jobId} carries two entries for the file ${JSON.stringify(entry.file)} (entries ${byFile.get(key)!.seq} and ${entry.seq})`);
    byFile.set(key, entry);
  }
  if (saved) {
    const savedRoot = Buffer.from(saved.root, 'base64');
    if (checkpoint.size < saved.size) {
      fail(
        `the service shows a signature record of ${entries(checkpoint.size)}, fewer than the ${saved.size} it showed on ${saved.savedAt}: the service's record was rolled back (restored from an older backup, or truncated). Ask the service's operator; the checkpoint saved then stays in ${ledger.path}`,
      );
    }
    if (checkpoint.size === saved.size && !checkpoint.root.equals(savedRoot)) {
      fail(
        `the service's signature record of ${entries(checkpoint.size)} has the root ${checkpoint.root.toString('base64')}, not the ${saved.root} it showed on ${saved.savedAt}: its record was rewritten`,
      );
    }
    if (checkpoint.size > saved.size) {
      const consistency = (await client.recordConsistency(saved.size, checkpoint.size)).map((h) => Buffer.from(h, 'base64'));
      if (!verifyConsistency(saved.size, checkpoint.size, savedRoot, checkpoint.root, consistency)) {
        fail(
          `the service's signature record of ${entries(checkpoint.size)} does not continue the one of ${entries(saved.size)} it showed on ${saved.savedAt} (the consistency proof does not fit): its record was rewritten`,
        );
      }
    }
  }
  const keep = () => {
    // Another run may have saved a larger one meanwhile (checked as this one was): the larger stays.
    ledger.saveRecordCheckpoint(
      identity,
      { publicKey: keyText, size: checkpoint.size, root: checkpoint.root.toString('base64'), checkpoint: checkpoint.text, savedAt: new Date().toISOString() },
      (before) => !before || before.size <= checkpoint.size,
    );
  };
  return {
    offered: true,
    size: checkpoint.size,
    entries: p.entries.map((e) => e.entry),
    key: keyText,
    trust,
    ...(saved ? { pinnedAt: saved.savedAt } : {}),
    byFile,
    keep,
  };
}

/** A file of the job as the client knows it after the download (nothing written yet). */
export interface JobFileBytes {
  /** The name it was uploaded under. */
  readonly uploadName: string;
  readonly uploadedSha256: string;
  /** What came back, when anything did. */
  readonly returned: Uint8Array | undefined;
}

/**
 * Ties the record to the bytes that came back, before they are written: every file that came back changed (the
 * service signed it) has an entry, each entry's signedSha256 is the SHA-256 of the bytes that came back and its
 * uploadedSha256 that of the bytes uploaded, and no entry names a file the job did not hold. A file that came back
 * unchanged (a netmodule, an already signed file) or not at all needs no entry.
 * `outcome` says what became of the job's files (default: nothing of it was written).
 * @throws SignGateError SG_ERR_RECORD_PROOF naming the file and both hashes
 */
export function bindRecordToFiles(
  check: RecordCheck,
  files: readonly JobFileBytes[],
  baseUrl: string,
  jobId: string,
  outcome = `nothing of job ${jobId} was written`,
): void {
  if (!check.offered) return;
  const fail = (message: string): never => {
    throw new SignGateError('SG_ERR_RECORD_PROOF', `${baseUrl}: ${message}; ${outcome}`);
  };
  const names = new Set(files.map((f) => windowsPathKey(f.uploadName)));
  for (const entry of check.byFile.values()) {
    if (!names.has(windowsPathKey(entry.file)))
      fail(`entry ${entry.seq} of the signature record names the file ${JSON.stringify(entry.file)}, which job ${jobId} did not hold`);
  }
  for (const f of files) {
    const entry = check.byFile.get(windowsPathKey(f.uploadName));
    const returnedSha256 = f.returned ? createHash('sha256').update(f.returned).digest('hex') : undefined;
    if (!entry) {
      if (returnedSha256 !== undefined && returnedSha256 !== f.uploadedSha256) {
        fail(
          `${f.uploadName} came back changed (SHA-256 ${returnedSha256}, uploaded as ${f.uploadedSha256}), but the signature record of job ${jobId} has no entry for it: a file the service changed without a record of it is refused`,
        );
      }
      continue;
    }
    if (entry.uploadedSha256 !== f.uploadedSha256)
      fail(
        `entry ${entry.seq} of the signature record says ${f.uploadName} was uploaded with SHA-256 ${entry.uploadedSha256}, but the file uploaded has ${f.uploadedSha256}`,
      );
    if (returnedSha256 === undefined)
      fail(
        `entry ${entry.seq} of the signature record says the service signed ${f.uploadName} (SHA-256 ${entry.signedSha256}), but the result package does not hold it`,
      );
    if (returnedSha256 !== entry.signedSha256) {
      fail(
        `${f.uploadName} came back with SHA-256 ${returnedSha256}, but entry ${entry.seq} of the signature record says the service signed it as ${entry.signedSha256}: the file changed after it was signed, or the record is not this file's`,
      );
    }
  }
}

/** The line `sign` prints for a checked record proof. */
export function describeRecordCheck(check: RecordCheck, jobId: string, baseUrl: string): string {
  if (!check.offered)
    return `note: ${baseUrl} offers no signature record (an older or third-party service): the job's files are checked, but no record proves when and by which key they were signed`;
  const head = `signature record: ${entries(check.entries.length)} of job ${jobId} in a checkpoint of ${check.size}`;
  const name = check.key.split('+').slice(0, 2).join('+');
  if (check.trust === 'expected') return `${head}, signed by the record key ${name} that --record-key names`;
  if (check.trust === 'pinned')
    return `${head}, signed by the record key ${name} pinned on ${check.pinnedAt}, and consistent with the checkpoint seen then or since`;
  return `${head}; first contact: the record key ${name} is now pinned on first use for ${recordIdentity(baseUrl)} (pass --record-key to pin it up front)`;
}

function pinName(saved: LedgerRecordCheckpoint): string {
  const [name, id] = saved.publicKey.split('+');
  return `${name} (key id ${id})`;
}
