// The Merkle tree of a record kept as stored hashes, so that a log of any size serves its roots and proofs from
// O(log n) hashes read from storage, never from its leaves in memory. The storage order is that of Go's
// golang.org/x/mod/sumdb/tlog: the hash of leaf n is followed by the hashes of the complete subtrees that leaf
// completes, lowest first (leaf 0; leaf 1, node (1,0); leaf 2; leaf 3, node (1,1), node (2,0); …), so a store only
// ever appends. The trees, roots and proofs are those of merkle.ts (RFC 9162 §2.1); a tree of no leaves has the
// root SHA-256 of nothing, as there.
import { createHash } from 'node:crypto';
import { nodeHash, type Hash } from './merkle.js';

/** Reads stored hashes by index, in the order asked; rejects when one is not stored. */
export type HashReader = (indexes: readonly number[]) => Promise<Hash[]>;

/** Where the hash of the subtree at `level` (2^level leaves) numbered `n` from the left is stored. */
export function storedHashIndex(level: number, n: number): number {
  // Level L's n-th hash comes right after level L+1's (2n+1)-th: walk down to level 0's order, then add the levels back.
  for (let l = level; l > 0; l--) n = 2 * n + 1;
  let index = 0;
  for (; n > 0; n = Math.floor(n / 2)) index += n;
  return index + level;
}

/** How many hashes a tree of `leaves` leaves stores. */
export function storedHashCount(leaves: number): number {
  if (leaves === 0) return 0;
  let count = storedHashIndex(0, leaves - 1) + 1;
  for (let i = leaves - 1; i % 2 === 1; i = Math.floor(i / 2)) count += 1;
  return count;
}

/** The most leaves whose hashes `stored` stored hashes hold whole (a store cut off within a leaf's hashes holds the leaves before). */
export function leavesIn(stored: number): number {
  let lo = 0;
  let hi = stored; // every leaf stores at least one hash
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (storedHashCount(mid) <= stored) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The hashes to store for leaf `n` (from 0) of hash `leaf`: the leaf's, then one per subtree it completes. Reads
 * the left siblings of those subtrees (stored before).
 */
export async function storedHashesForLeaf(n: number, leaf: Hash, read: HashReader): Promise<Hash[]> {
  let completes = 0;
  for (let i = n; i % 2 === 1; i = Math.floor(i / 2)) completes += 1;
  const indexes: number[] = [];
  for (let level = 0; level < completes; level++) indexes.unshift(storedHashIndex(level, Math.floor(n / 2 ** level) - 1));
  const left = await read(indexes);
  const hashes = [leaf];
  let h = leaf;
  for (let level = 0; level < completes; level++) {
    h = nodeHash(left[completes - 1 - level]!, h);
    hashes.push(h);
  }
  return hashes;
}

/** The largest power of two below n (n > 1), and its exponent. */
function split(n: number): { k: number; level: number } {
  let level = 0;
  while (2 ** (level + 1) < n) level += 1;
  return { k: 2 ** level, level };
}

/** The stored indexes of the complete subtrees that make up leaves [lo, hi), largest first. */
function subtreeIndexes(lo: number, hi: number, need: number[]): number[] {
  while (lo < hi) {
    const { k, level } = split(hi - lo + 1); // the largest power of two not above hi - lo
    need.push(storedHashIndex(level, lo / k));
    lo += k;
  }
  return need;
}

/** The root of leaves [lo, hi) from the hashes subtreeIndexes named, taken from the front of `hashes`. */
function subtreeHash(lo: number, hi: number, hashes: Hash[]): Hash {
  const parts: Hash[] = [];
  while (lo < hi) {
    parts.push(hashes.shift()!);
    lo += split(hi - lo + 1).k;
  }
  let h = parts[parts.length - 1]!;
  for (let i = parts.length - 2; i >= 0; i--) h = nodeHash(parts[i]!, h);
  return h;
}

function checkSize(what: string, value: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > max) throw new RangeError(`${what} ${value} is not a whole number from 0 to ${max}`);
}

/** MTH of the first `size` leaves, from at most log2(size) + 1 stored hashes. */
export async function storedTreeRoot(size: number, read: HashReader): Promise<Hash> {
  if (size === 0) return createHash('sha256').digest();
  return subtreeHash(0, size, await read(subtreeIndexes(0, size, [])));
}

/**
 * A proof read from stored hashes, by the descent RFC 9162 describes: at each split (k leaves on the left) it goes
 * left or right (`goesLeft`) and takes the other side's root; `end` says where the descent stops, and whether the
 * subtree it stops at is part of the proof. The stored indexes are gathered first and read at once.
 */
async function proofByDescent(
  size: number,
  read: HashReader,
  goesLeft: (lo: number, k: number) => boolean,
  end: (lo: number, hi: number) => 'nothing' | 'subtree' | undefined,
): Promise<Hash[]> {
  const need: number[] = [];
  const plan = (lo: number, hi: number): void => {
    const stop = end(lo, hi);
    if (stop) {
      if (stop === 'subtree') subtreeIndexes(lo, hi, need);
      return;
    }
    const { k } = split(hi - lo);
    if (goesLeft(lo, k)) {
      plan(lo, lo + k);
      subtreeIndexes(lo + k, hi, need);
    } else {
      subtreeIndexes(lo, lo + k, need);
      plan(lo + k, hi);
    }
  };
  plan(0, size);
  const hashes = await read(need);
  // Built in the order the indexes were gathered: each side's hashes are taken from the front as they come.
  const build = (lo: number, hi: number): Hash[] => {
    const stop = end(lo, hi);
    if (stop) return stop === 'subtree' ? [subtreeHash(lo, hi, hashes)] : [];
    const { k } = split(hi - lo);
    if (goesLeft(lo, k)) {
      const inner = build(lo, lo + k);
      return [...inner, subtreeHash(lo + k, hi, hashes)];
    }
    const sibling = subtreeHash(lo, lo + k, hashes);
    return [...build(lo + k, hi), sibling];
  };
  return build(0, size);
}

/** PATH(index, D[0:size]) (RFC 9162 §2.1.3.1) from stored hashes: at most about 2·log2(size) of them. */
export async function storedInclusionProof(index: number, size: number, read: HashReader): Promise<Hash[]> {
  checkSize('tree size', size, Number.MAX_SAFE_INTEGER);
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) throw new RangeError(`leaf index ${index} is not in a tree of ${size} leaves`);
  return proofByDescent(
    size,
    read,
    (lo, k) => index < lo + k,
    (lo, hi) => (hi - lo <= 1 ? 'nothing' : undefined),
  );
}

/** PROOF(from, D[0:to]) (RFC 9162 §2.1.4.1) from stored hashes: at most about 2·log2(to) of them. */
export async function storedConsistencyProof(from: number, to: number, read: HashReader): Promise<Hash[]> {
  checkSize('tree size', to, Number.MAX_SAFE_INTEGER);
  checkSize('older tree size', from, to);
  if (from === 0 || from === to) return [];
  return proofByDescent(
    to,
    read,
    (lo, k) => from <= lo + k,
    (lo, hi) => (from === hi ? (lo === 0 ? 'nothing' : 'subtree') : undefined),
  );
}
