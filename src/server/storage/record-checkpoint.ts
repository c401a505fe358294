// Checkpoints of a deployment's signature record, wherever it is kept: the leaves of its verified entries, the
// checkpoint the record key signs over them, and the check that a record continues a checkpoint someone saved.
import { UsageError } from '../../core/errors.js';
import { entryLeaf, parseCheckpoint, signCheckpoint, type Checkpoint, type RecordVerifier } from '../../record/checkpoint.js';
import { CompactRange, consistencyProof, inclusionProof, rootHash, type Hash, type SubtreeCache } from '../../record/merkle.js';
import { CheckpointContinuation, continuationProblem } from '../../record/record-continuation.js';
import { ChainChecker, type RecordVerification, type SignatureEntry } from '../../record/signature-record.js';
import type { SignatureRecordReader } from './store.js';
import type { RecordKey } from './record-key.js';

/** The record's verification; throws naming the first break. */
async function verifiedRecord(record: SignatureRecordReader): Promise<RecordVerification> {
  const verification = await record.verify();
  if (verification.break)
    throw new UsageError(
      `the signature record ${record.where} does not verify: ${verification.break.message}`,
      'Run `signgate serve record verify` for the details; restore the record from a backup.',
    );
  return verification;
}

/** The first `count` entries of the record, in order: those a verification found intact (entries appended since are not). */
async function* firstEntries(record: SignatureRecordReader, count: number): AsyncGenerator<SignatureEntry> {
  if (count === 0) return;
  let seen = 0;
  for await (const entry of record.entries()) {
    yield entry;
    if (++seen === count) return;
  }
}

/** The leaves of the record's entries, after its chain verified (all of them in memory: a job's proofs need them); throws naming the first break. */
export async function verifiedLeaves(record: SignatureRecordReader): Promise<{ leaves: Hash[]; verification: RecordVerification }> {
  const verification = await verifiedRecord(record);
  const leaves: Hash[] = [];
  for await (const entry of firstEntries(record, verification.entries)) leaves.push(entryLeaf(entry));
  return { leaves, verification };
}

/** The record's checkpoint now, signed by the record key: the root from a CompactRange, the entries read one at a time. */
export async function recordCheckpoint(record: SignatureRecordReader, key: RecordKey): Promise<string> {
  const tree = new CompactRange();
  for await (const entry of firstEntries(record, (await verifiedRecord(record)).entries)) tree.append(entryLeaf(entry));
  return signCheckpoint({ size: tree.size, root: tree.root() }, key.privateKey, key.verifier.name);
}

/**
 * Whether the entries `verification` (the record's verify()) found intact continue `checkpoint` (read from
 * `saved`), read one at a time: see CheckpointContinuation. The problem, naming what was found, or undefined.
 */
export async function recordContinuation(
  record: SignatureRecordReader,
  verification: RecordVerification,
  checkpoint: Checkpoint,
  saved: string,
): Promise<string | undefined> {
  const continuation = new CheckpointContinuation(checkpoint);
  for await (const entry of firstEntries(record, verification.entries)) continuation.add(entry);
  return continuation.problem(record.where, saved);
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

/** What a job's status carries of the record (the documented extension field `signatureRecord`). */
export interface JobRecordProof {
  /** The signed checkpoint of a tree that holds every entry of the job. */
  readonly checkpoint: string;
  readonly entries: readonly {
    /** The entry as the record holds it (its leaf: SHA-256(0x00 || its line without the newline)). */
    readonly entry: SignatureEntry;
    /** Its leaf's index in the tree (seq - 1). */
    readonly leafIndex: number;
    /** The RFC 9162 inclusion proof of the leaf in the checkpoint's tree, base64 hashes. */
    readonly inclusionProof: readonly string[];
  }[];
}

/**
 * The record as a growing Merkle log in the service's memory: the leaves of every entry (each checked against the
 * chain as it is read), the entries per job, complete subtrees cached; read on from where it stopped when a job's
 * entries are asked for and not known yet. Signs checkpoints with the record key.
 */
export class RecordLog {
  private readonly leaves: Hash[] = [];
  private readonly byJob = new Map<string, SignatureEntry[]>();
  private readonly cache: SubtreeCache = new Map();
  private readonly checker: ChainChecker;
  private signed: { size: number; text: string } | undefined;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly record: SignatureRecordReader,
    readonly key: RecordKey,
  ) {
    this.checker = new ChainChecker(record.where);
  }

  /** Reads the entries appended since the last read (one read at a time). */
  refresh(): Promise<void> {
    this.reading ??= (async () => {
      try {
        for await (const entry of this.record.entriesAfter(this.leaves.length)) {
          const broken = this.checker.add(entry, null);
          if (broken)
            throw new UsageError(
              `the signature record ${this.record.where} does not verify: ${broken.message}`,
              'Run `signgate serve record verify`; the service signs no checkpoint of a broken record.',
              'SG_ERR_CONFIG',
            );
          this.leaves.push(entryLeaf(entry));
          const list = this.byJob.get(entry.job);
          if (list) list.push(entry);
          else this.byJob.set(entry.job, [entry]);
        }
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }

  get size(): number {
    return this.leaves.length;
  }

  /** The signed checkpoint of the tree as read (signed once per size). */
  checkpoint(): string {
    if (this.signed?.size !== this.leaves.length) {
      this.signed = {
        size: this.leaves.length,
        text: signCheckpoint(
          { size: this.leaves.length, root: rootHash(this.leaves, 0, this.leaves.length, this.cache) },
          this.key.privateKey,
          this.key.verifier.name,
        ),
      };
    }
    return this.signed.text;
  }

  /** The RFC 9162 consistency proof between the trees of `from` and `to` entries (base64), after reading on. */
  async consistency(from: number, to: number): Promise<string[]> {
    if (to > this.leaves.length) await this.refresh();
    return consistencyProof(this.leaves, from, to, this.cache).map((h) => h.toString('base64'));
  }

  /** The job's entries with their inclusion proofs in the current checkpoint; undefined when it has none. */
  async jobProof(jobId: string): Promise<JobRecordProof | undefined> {
    if (!this.byJob.has(jobId)) await this.refresh();
    const entries = this.byJob.get(jobId);
    if (!entries) return undefined;
    const checkpoint = this.checkpoint();
    const size = this.leaves.length;
    return {
      checkpoint,
      entries: entries.map((entry) => ({
        entry,
        leafIndex: entry.seq - 1,
        inclusionProof: inclusionProof(this.leaves, entry.seq - 1, size, this.cache).map((h) => h.toString('base64')),
      })),
    };
  }
}
