// Checkpoints of a deployment's signature record, wherever it is kept: the leaves of its verified entries, the
// checkpoint the record key signs over them, and the check that a record continues a checkpoint someone saved.
import { UsageError } from '../../core/errors.js';
import { continuationProblem, entryLeaf, parseCheckpoint, signCheckpoint, type RecordVerifier } from '../../core/checkpoint.js';
import { rootHash, type Hash } from '../../core/merkle.js';
import type { RecordVerification } from '../../core/signature-record.js';
import type { SignatureRecordReader } from '../jobs/store.js';
import type { RecordKey } from './record-key.js';

/** The leaves of the record's entries, after its chain verified; throws naming the first break. */
export async function verifiedLeaves(record: SignatureRecordReader): Promise<{ leaves: Hash[]; verification: RecordVerification }> {
  const verification = await record.verify();
  if (verification.break) throw new UsageError(`the signature record ${record.where} does not verify: ${verification.break.message}`, 'Run `signgate serve record verify` for the details; restore the record from a backup.');
  const leaves: Hash[] = [];
  for await (const entry of record.entries()) {
    if (leaves.length === verification.entries) break; // appended since: not verified, not in this checkpoint
    leaves.push(entryLeaf(entry));
  }
  return { leaves, verification };
}

/** The record's checkpoint now, signed by the record key. */
export async function recordCheckpoint(record: SignatureRecordReader, key: RecordKey): Promise<string> {
  const { leaves } = await verifiedLeaves(record);
  return signCheckpoint({ size: leaves.length, root: rootHash(leaves) }, key.privateKey, key.verifier.name);
}

/**
 * Whether the record continues the checkpoint `text` (read from `saved`): its signature by `verifier`, then the
 * record's first entries against it. The problem, naming what was found, or undefined.
 * @throws UsageError when the text is no checkpoint of that key
 */
export function checkpointProblem(leaves: readonly Hash[], where: string, text: string, saved: string, verifier: RecordVerifier): string | undefined {
  const checkpoint = parseCheckpoint(text, verifier, saved);
  return continuationProblem(leaves, checkpoint, where, saved);
}
