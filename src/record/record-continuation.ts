// Whether a record continues a checkpoint saved earlier, decided while the record is read a line at a time: the root
// of its first entries comes from a CompactRange (at most log2(n) + 1 hashes), so that a record of any size is
// compared in the same small memory, never with its leaves held. continuationProblem decides the same over leaves held
// in memory (the service's own log), through the same class.
import { entryLeaf, type TreeHead } from './checkpoint.js';
import { CompactRange, type Hash } from './merkle.js';
import type { SignatureEntry } from './signature-record.js';

/**
 * The entries of a record, given in order as they verify, against a checkpoint's tree head: how many there are, and
 * the root of the first `checkpoint.size` (entries after them are only counted: a record that continues the
 * checkpoint may have grown since).
 */
export class CheckpointContinuation {
  private readonly tree = new CompactRange();
  private count = 0;
  private rootAtSize: Hash | undefined;

  constructor(private readonly checkpoint: TreeHead) {
    if (checkpoint.size === 0) this.rootAtSize = this.tree.root();
  }

  /** The next entry of the record (one that verified). */
  add(entry: SignatureEntry): void {
    this.addLeaf(this.count < this.checkpoint.size ? entryLeaf(entry) : undefined);
  }

  /** The next leaf hash of the record; undefined for one past the checkpoint's size, which is only counted. */
  addLeaf(leaf: Hash | undefined): void {
    this.count += 1;
    if (this.count > this.checkpoint.size) return;
    this.tree.append(leaf!);
    if (this.count === this.checkpoint.size) this.rootAtSize = this.tree.root();
  }

  /**
   * Whether the entries given continue the checkpoint: they are at least as many, and the first ones hash to its
   * root. The problem, naming what was found (`where` names the record, `saved` the checkpoint), or undefined.
   */
  problem(where: string, saved: string): string | undefined {
    const { size, root } = this.checkpoint;
    const holds = `${this.count} ${this.count === 1 ? 'entry' : 'entries'}`;
    if (this.rootAtSize === undefined) {
      return `${where} holds ${holds}, fewer than the ${size} of the checkpoint ${saved}: entries were removed from its end since (rolled back or truncated)`;
    }
    if (this.rootAtSize.equals(root)) return undefined;
    const found = `the first ${size} entries of ${where} hash to ${this.rootAtSize.toString('base64')}, not to the root ${root.toString('base64')}`;
    return `${found} of the checkpoint ${saved}: the record was rewritten (an entry among them was changed, removed, inserted or replaced)`;
  }
}

/**
 * Whether a record (the leaves of its entries, in order) continues the tree a saved checkpoint names: it holds at
 * least the checkpoint's entries, and its first ones hash to the checkpoint's root. The problem, naming what was
 * found, or undefined when it continues it.
 */
export function continuationProblem(leaves: readonly Hash[], checkpoint: TreeHead, where: string, saved: string): string | undefined {
  const continuation = new CheckpointContinuation(checkpoint);
  for (const leaf of leaves) continuation.addLeaf(leaf);
  return continuation.problem(where, saved);
}
