// Checkpoints of a deployment's signature record, wherever it is kept: the leaves of its verified entries, the
// checkpoint the record key signs over them, and the check that a record continues a checkpoint someone saved.
import { UsageError } from '../../core/errors.js';
import { entryLeaf, parseCheckpoint, signCheckpoint, type Checkpoint, type RecordVerifier } from '../../record/checkpoint.js';
import { CompactRange, type Hash } from '../../record/merkle.js';
import {
  leavesIn,
  storedConsistencyProof,
  storedHashCount,
  storedHashesForLeaf,
  storedHashIndex,
  storedInclusionProof,
  storedTreeRoot,
  type HashReader,
} from '../../record/stored-tree.js';
import { CheckpointContinuation, continuationProblem } from '../../record/record-continuation.js';
import { ChainChecker, type RecordVerification, type SignatureEntry } from '../../record/signature-record.js';
import type { RecordTreeHashes, SignatureRecordReader } from '../ports.js';
import type { RecordKey } from '../record-key.js';

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

/** Jobs whose entries' places RecordLog remembers after looking them up in the whole record. */
const FOUND_SEQS_KEPT = 1000;

/** Stored hashes written to the tree at once while the record is read on. */
const TREE_WRITE_HASHES = 1 << 12;

/**
 * The record as a growing Merkle log served from its stored tree (RecordTreeHashes, in Go tlog's order): the
 * service keeps no entry and no leaf in memory, and a checkpoint or a proof reads O(log n) stored hashes, so a
 * record of any size costs the same memory. Reading on (refresh) checks each new entry against the chain and
 * stores its hashes; at the first read, the last stored leaf is compared with the record's entry, and a tree that
 * does not match (or is cut off within a leaf) is built again from the first entry. A job's entries are read from
 * the record and each compared with its stored leaf before its proof is given. Signs checkpoints with the record key.
 */
export class RecordLog {
  /** Leaves whose hashes are stored and whose entries were checked. */
  private leaves = 0;
  private started = false;
  private checker: ChainChecker;
  private readonly tree: RecordTreeHashes;
  private signed: { size: number; text: string } | undefined;
  private reading: Promise<void> | undefined;
  private stopping = false;
  /** Where the entries of jobs that do not say were found (the oldest forgotten first). */
  private readonly foundSeqs = new Map<string, readonly number[]>();

  constructor(
    private readonly record: SignatureRecordReader,
    readonly key: RecordKey,
  ) {
    this.checker = new ChainChecker(record.where);
    this.tree = record.tree();
  }

  private readonly read: HashReader = (indexes) => this.tree.read(indexes);

  /** Reads the entries appended since the last read (one read at a time); nothing once stop() was called. */
  refresh(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    this.reading ??= (async () => {
      try {
        if (!this.started) await this.resume();
        await this.readOn();
      } catch (error) {
        // The chain was checked further than the tree was stored (a write that failed, a break): the next read
        // takes the stored tree up again and checks from there.
        this.started = false;
        this.checker = new ChainChecker(this.record.where);
        throw error;
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }

  /** Takes up the stored tree where it ends, when its last leaf is the record's entry there; else starts it again. */
  private async resume(): Promise<void> {
    const stored = await this.tree.count();
    const leaves = leavesIn(stored);
    let entry: SignatureEntry | undefined;
    if (leaves > 0)
      for await (const e of this.record.entriesAfter(leaves - 1)) {
        entry = e;
        break;
      }
    const [leaf] = entry?.seq === leaves ? await this.tree.read([storedHashIndex(0, leaves - 1)]) : [];
    // The entry must be whole (its own hash) and be the stored leaf; the chain is checked from it on.
    const probe = new ChainChecker(this.record.where);
    if (entry) probe.continueFrom({ seq: leaves - 1, hash: entry.prev });
    if (entry && leaf && entryLeaf(entry).equals(leaf) && !probe.add(entry, null)) {
      this.checker.continueFrom({ seq: entry.seq, hash: entry.hash });
      this.leaves = leaves;
    } else {
      this.leaves = 0;
      if (stored > 0) await this.tree.reset();
    }
    this.started = true;
  }

  /** Checks and stores the entries after those the tree holds. */
  private async readOn(): Promise<void> {
    let at = storedHashCount(this.leaves);
    let pending: Hash[] = [];
    let n = this.leaves;
    // The hashes of the leaves read here come from `pending` until they are written.
    const read: HashReader = async (indexes) => {
      const older = indexes.filter((i) => i < at);
      const stored = older.length ? await this.tree.read(older) : [];
      let k = 0;
      return indexes.map((i) => (i < at ? stored[k++]! : pending[i - at]!));
    };
    const flush = async () => {
      await this.tree.write(at, pending);
      at += pending.length;
      pending = [];
      this.leaves = n;
    };
    for await (const entry of this.record.entriesAfter(this.leaves)) {
      if (this.stopping) break;
      const broken = this.checker.add(entry, null);
      if (broken)
        throw new UsageError(
          `the signature record ${this.record.where} does not verify: ${broken.message}`,
          'Run `signgate serve record verify`; the service signs no checkpoint of a broken record.',
          'SG_ERR_CONFIG',
        );
      pending.push(...(await storedHashesForLeaf(n, entryLeaf(entry), read)));
      n += 1;
      if (pending.length >= TREE_WRITE_HASHES) await flush();
    }
    if (pending.length) await flush();
  }

  get size(): number {
    return this.leaves;
  }

  /** Ends a read in progress after the hashes it computed are stored (a node that stops), and reads no more. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.reading?.catch(() => {});
  }

  /** The signed checkpoint of the tree of `size` entries (as read: the last one signed is kept). */
  private async checkpointOf(size: number): Promise<string> {
    if (this.signed?.size !== size) {
      const root = await storedTreeRoot(size, this.read);
      this.signed = { size, text: signCheckpoint({ size, root }, this.key.privateKey, this.key.verifier.name) };
    }
    return this.signed.text;
  }

  /** The signed checkpoint of the tree as read. */
  checkpoint(): Promise<string> {
    return this.checkpointOf(this.leaves);
  }

  /** The RFC 9162 consistency proof between the trees of `from` and `to` entries (base64), after reading on. */
  async consistency(from: number, to: number): Promise<string[]> {
    if (to > this.leaves) await this.refresh();
    return (await storedConsistencyProof(from, to, this.read)).map((h) => h.toString('base64'));
  }

  /**
   * The job's entries with their inclusion proofs in the current checkpoint; undefined when it has none. `seqs`:
   * where the job's entries are, when its store says (JobRecord.recordSeqs).
   * @throws UsageError when an entry the record gives for the job is not the one its tree holds
   */
  async jobProof(jobId: string, seqs?: readonly number[]): Promise<JobRecordProof | undefined> {
    const entries: SignatureEntry[] = [];
    for await (const entry of this.record.entriesOfJob(jobId, seqs ?? this.foundSeqs.get(jobId))) entries.push(entry);
    if (entries.length === 0) return undefined;
    // A job that does not say where its entries are (finished by an older release) is looked for once, not at every status.
    if (!seqs && !this.foundSeqs.has(jobId)) {
      if (this.foundSeqs.size >= FOUND_SEQS_KEPT) this.foundSeqs.delete(this.foundSeqs.keys().next().value!);
      this.foundSeqs.set(
        jobId,
        entries.map((e) => e.seq),
      );
    }
    if (!this.started || entries.some((e) => e.seq > this.leaves)) await this.refresh();
    const size = this.leaves;
    const checkpoint = await this.checkpointOf(size);
    const out: JobRecordProof['entries'][number][] = [];
    for (const entry of entries) {
      const index = entry.seq - 1;
      const [leaf] = Number.isSafeInteger(index) && index >= 0 && index < size ? await this.read([storedHashIndex(0, index)]) : [];
      if (entry.job !== jobId || !leaf || !entryLeaf(entry).equals(leaf))
        throw new UsageError(
          `entry ${entry.seq} of the signature record ${this.record.where}, given for job ${jobId}, is not the entry the record's tree holds there`,
          'Run `signgate serve record verify`; the service gives no proof for an entry its record does not hold.',
          'SG_ERR_CONFIG',
        );
      out.push({ entry, leafIndex: index, inclusionProof: (await storedInclusionProof(index, size, this.read)).map((h) => h.toString('base64')) });
    }
    return { checkpoint, entries: out };
  }
}
