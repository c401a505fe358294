// What the client checks of the service's signature record on every job: a finished job's status carries the
// job's entries with RFC 9162 inclusion proofs in a checkpoint signed by the service's record key (deploy.md,
// "Checkpoints"). The client verifies the checkpoint's signature by the expected record key (given up front with
// --record-key, else pinned in the job ledger the first time), each entry's inclusion, that the entries cover every
// file the service says it signed, and that the checkpoint continues the latest one it saw (a consistency proof);
// after the download, each returned file's SHA-256 must be its entry's signedSha256 (before anything is written).
// Only then is the new checkpoint kept, before anything of the job is written.
//
// One writer of the pin at a time: runs sharing the ledger (projects built in parallel, CI jobs on one agent) keep
// their checkpoints under the ledger's lock, which re-reads the pin. When another run saved one after this run read
// it, the checkpoint is checked again against that pin (its key; same size, same root; larger, a consistency proof
// from it; smaller, a consistency proof to it, the service being asked) and refused with the same error as had the
// runs gone one after the other: a fork of the service (same key, another tree), or another key on first use, can
// never end as the pin while a run that saw it exits 0.
//
// Fail closed: once a record was seen for a service (or a key is expected), a status without one is refused. A
// service that has never shown a record (an older or third-party one, the vendor's own) stays usable, and says so.
// The pin belongs to the service's identity (recordIdentity: scheme, host, port and path, normalized), not to the
// spelling of its URL.
import { createHash } from 'node:crypto';
import { noteSigners, parseCheckpoint, parseVerifierKey, formatVerifierKey, type Checkpoint, type RecordVerifier } from '../record/checkpoint.js';
import { isSignGateError, ServiceError, SignGateError } from '../core/errors.js';
import { leafHash, verifyConsistency, verifyInclusion } from '../record/merkle.js';
import { entryLine, type SignatureEntry } from '../record/signature-record.js';
import { windowsPathKey } from '../core/windows-names.js';
import type { ServiceClient } from '../service-client/client.js';
import { recordIdentity, samePin, type Ledger, type LedgerRecordCheckpoint } from './ledger.js';

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
  | {
      readonly offered: false;
      /**
       * Checks, before anything of the job is written, that no run of this ledger saw a record of the service since
       * this one read the ledger: else refused as it would have been had that run ended first.
       */
      readonly keep: (outcome?: string) => Promise<void>;
    }
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
      /**
       * Saves the checkpoint as the service's pin, to be called before anything of the job is written. Under the
       * ledger's lock the pin is read again: when another run saved one since this check read it, the checkpoint is
       * checked again against that one (its key, a consistency proof) and refused as it would have been had the runs
       * gone one after the other. `outcome` ends a refusal's message (default: nothing of the job was written).
       */
      readonly keep: (outcome?: string) => Promise<void>;
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

/** How often keep() checks again against a pin other runs keep replacing before it asks for a new run. */
const KEEP_ROUNDS = 20;

/** What checking the proof against one state of the pin established (none: the service offers no record). */
interface Checked {
  readonly checkpoint: Checkpoint;
  readonly keyText: string;
  readonly trust: 'expected' | 'pinned' | 'first-use';
  readonly byFile: Map<string, SignatureEntry>;
}

/**
 * Checks a finished job's `signatureRecord` before anything of the job is downloaded.
 * @throws SignGateError SG_ERR_RECORD_PROOF naming what was found
 */
export async function checkRecordProof(input: RecordProofInput): Promise<RecordCheck> {
  const { ledger, baseUrl, jobId } = input;
  const identity = recordIdentity(baseUrl);
  let saved = ledger.recordCheckpoint(identity);
  const first = await checkAgainst(input, saved, `nothing of job ${jobId} was written`);
  if (!first) {
    const seen = saved;
    return {
      offered: false,
      keep: async (outcome = `nothing of job ${jobId} was written`) => {
        const now = ledger.recordCheckpoint(identity);
        if (!samePin(now, seen)) await checkAgainst(input, now, outcome);
      },
    };
  }
  let checked = first;
  const result = {
    offered: true as const,
    size: checked.checkpoint.size,
    entries: shapeOf(input.proof)!.entries.map((e) => e.entry),
    key: checked.keyText,
    trust: checked.trust,
    ...(saved ? { pinnedAt: saved.savedAt } : {}),
    byFile: checked.byFile as ReadonlyMap<string, SignatureEntry>,
    keep: async (outcome = `nothing of job ${jobId} was written`): Promise<void> => {
      for (let round = 1; ; round++) {
        const { checkpoint, keyText } = checked;
        const pin = {
          publicKey: keyText,
          size: checkpoint.size,
          root: checkpoint.root.toString('base64'),
          checkpoint: checkpoint.text,
          savedAt: new Date().toISOString(),
        };
        const done = ledger.saveRecordCheckpoint(identity, pin, saved);
        if (done.outcome !== 'changed') return;
        if (round === KEEP_ROUNDS)
          throw new SignGateError(
            'SG_ERR_RECORD_PROOF',
            `${baseUrl}: the record pin of ${identity} in the job ledger ${ledger.path} changed ${KEEP_ROUNDS} times while this run checked the checkpoint of job ${jobId} against it (other runs share the ledger); ${outcome}. Run the command again`,
          );
        // Another run saved a pin (or removed it) after this one read it: the same checks against that one.
        saved = done.pin;
        checked = (await checkAgainst(input, saved, outcome))!;
        Object.assign(result, { key: checked.keyText, trust: checked.trust, ...(saved ? { pinnedAt: saved.savedAt } : {}) });
      }
    },
  };
  return result;
}

/**
 * The checks of a job's record proof against `saved`, the service's pin as the ledger held it (or none): the key, the
 * checkpoint's signature, each entry's inclusion, and that the checkpoint continues the pin or, when smaller (a
 * checkpoint another run of this ledger saved after this job's status came), is a part of it. Undefined when the
 * service offers no record (and none is expected or was seen).
 * @throws SignGateError SG_ERR_RECORD_PROOF naming what was found, its message ending with `outcome`
 */
async function checkAgainst(input: RecordProofInput, saved: LedgerRecordCheckpoint | undefined, outcome: string): Promise<Checked | undefined> {
  const { client, ledger, baseUrl, jobId, proof, expectedKey } = input;
  const identity = recordIdentity(baseUrl);
  const fail = (message: string): never => {
    throw new SignGateError('SG_ERR_RECORD_PROOF', `${baseUrl}: ${message}; ${outcome}`);
  };
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
    return undefined;
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
      // Another run of this ledger may have saved a later checkpoint of the same record after this job's status came:
      // the service then proves this one a part of it. A record rolled back (truncated, an older backup) cannot.
      let consistency: Buffer[] | undefined;
      try {
        consistency = (await client.recordConsistency(checkpoint.size, saved.size)).map((h) => Buffer.from(h, 'base64'));
      } catch (error) {
        if (!(error instanceof ServiceError && error.status === 400)) throw error;
      }
      if (!consistency)
        fail(
          `the service shows a signature record of ${entries(checkpoint.size)}, fewer than the ${saved.size} it showed on ${saved.savedAt}: the service's record was rolled back (restored from an older backup, or truncated). Ask the service's operator; the checkpoint saved then stays in ${ledger.path}`,
        );
      if (!verifyConsistency(checkpoint.size, saved.size, checkpoint.root, savedRoot, consistency!))
        fail(
          `the service's signature record of ${entries(checkpoint.size)} is not a part of the one of ${entries(saved.size)} it showed on ${saved.savedAt} (the consistency proof does not fit): its record was rewritten`,
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
  return { checkpoint, keyText, trust, byFile };
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
