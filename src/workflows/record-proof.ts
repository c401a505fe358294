// What the client checks of the service's signature record on every job: a finished job's status carries the
// job's entries with RFC 9162 inclusion proofs in a checkpoint signed by the service's record key (deploy.md,
// "Checkpoints"). The client pins the record key the first time (in the job ledger, per service), verifies the
// checkpoint's signature and each entry's inclusion, and proves that the checkpoint continues the latest one it saw
// (a consistency proof from the service); then it keeps the new one. A service that shows a smaller tree, a
// rewritten one, or a checkpoint of another key is refused before anything is downloaded.
import { parseCheckpoint, parseVerifierKey, type Checkpoint } from '../core/checkpoint.js';
import { isSignGateError, SignGateError } from '../core/errors.js';
import { leafHash, verifyConsistency, verifyInclusion } from '../core/merkle.js';
import { entryLine, type SignatureEntry } from '../core/signature-record.js';
import type { ServiceClient } from '../service-client/client.js';
import type { Ledger } from './ledger.js';

interface ProofShape {
  checkpoint: string;
  entries: { entry: SignatureEntry; leafIndex: number; inclusionProof: string[] }[];
}

function shapeOf(value: unknown): ProofShape | undefined {
  const v = value as ProofShape | null;
  if (typeof v?.checkpoint !== 'string' || !Array.isArray(v.entries)) return undefined;
  for (const e of v.entries) {
    if (typeof e?.entry !== 'object' || e.entry === null || !Number.isSafeInteger(e.leafIndex) || !Array.isArray(e.inclusionProof) || e.inclusionProof.some((p) => typeof p !== 'string')) return undefined;
  }
  return v;
}

/**
 * Checks a finished job's `signatureRecord` (nothing to check when the service gives none) and saves its checkpoint
 * as the service's latest in the ledger.
 * @returns the checkpoint's size and the entries checked, or undefined when the status carried no record proof
 * @throws SignGateError SG_ERR_RECORD_PROOF naming what was found
 */
export async function checkRecordProof(client: ServiceClient, ledger: Ledger, baseUrl: string, jobId: string, proof: unknown): Promise<{ size: number; entries: readonly SignatureEntry[] } | undefined> {
  if (proof === undefined) return undefined;
  const fail = (message: string): never => {
    throw new SignGateError('SG_ERR_RECORD_PROOF', `${baseUrl}: ${message}`);
  };
  const p = shapeOf(proof) ?? fail(`the status of job ${jobId} has a signatureRecord that is not one (checkpoint, entries with entry, leafIndex and inclusionProof)`);
  const saved = ledger.recordCheckpoint(baseUrl);
  const keyText = saved?.publicKey ?? (await client.recordPublicKey());
  let checkpoint: Checkpoint;
  try {
    checkpoint = parseCheckpoint(p.checkpoint, parseVerifierKey(keyText, `the record key of ${baseUrl}${saved ? ' saved in the job ledger' : ''}`), `the checkpoint of job ${jobId}`);
  } catch (error) {
    if (isSignGateError(error)) fail(error.message);
    throw error;
  }
  for (const { entry, leafIndex, inclusionProof } of p.entries) {
    if (entry.job !== jobId) fail(`the status of job ${jobId} carries an entry of job ${String(entry.job)} (entry ${String(entry.seq)})`);
    const leaf = leafHash(Buffer.from(entryLine(entry).slice(0, -1), 'utf8'));
    if (leafIndex !== entry.seq - 1 || !verifyInclusion(leaf, leafIndex, checkpoint.size, inclusionProof.map((h) => Buffer.from(h, 'base64')), checkpoint.root)) {
      fail(`entry ${String(entry.seq)} of job ${jobId} (file ${String(entry.file)}) is not in the tree of its checkpoint (${entries(checkpoint.size)}): its inclusion proof does not fit`);
    }
  }
  if (saved) {
    const savedRoot = Buffer.from(saved.root, 'base64');
    if (checkpoint.size < saved.size) {
      fail(`the service shows a signature record of ${entries(checkpoint.size)}, fewer than the ${saved.size} it showed on ${saved.savedAt}: its record was rolled back or truncated`);
    }
    if (checkpoint.size === saved.size && !checkpoint.root.equals(savedRoot)) {
      fail(`the service's signature record of ${entries(checkpoint.size)} has the root ${checkpoint.root.toString('base64')}, not the ${saved.root} it showed on ${saved.savedAt}: its record was rewritten`);
    }
    if (checkpoint.size > saved.size) {
      const consistency = (await client.recordConsistency(saved.size, checkpoint.size)).map((h) => Buffer.from(h, 'base64'));
      if (!verifyConsistency(saved.size, checkpoint.size, savedRoot, checkpoint.root, consistency)) {
        fail(`the service's signature record of ${entries(checkpoint.size)} does not continue the one of ${entries(saved.size)} it showed on ${saved.savedAt} (the consistency proof does not fit): its record was rewritten`);
      }
    }
  }
  // Another run may have saved a larger one meanwhile (checked as this one was): the larger stays.
  ledger.saveRecordCheckpoint(baseUrl, { publicKey: keyText, size: checkpoint.size, root: checkpoint.root.toString('base64'), checkpoint: checkpoint.text, savedAt: new Date().toISOString() }, (before) => !before || before.size <= checkpoint.size);
  return { size: checkpoint.size, entries: p.entries.map((e) => e.entry) };
}

const entries = (n: number) => `${n} ${n === 1 ? 'entry' : 'entries'}`;
