// The Merkle tree of an append-only log as RFC 9162 §2.1 defines it (the tree of Certificate Transparency, Sigstore
// Rekor and Go's checksum database): a leaf's hash is SHA-256(0x00 || its bytes), a node's SHA-256(0x01 || left ||
// right); a tree of n > 1 leaves splits at the largest power of two below n. The inclusion proof shows that a leaf
// is in a tree of a given root (§2.1.3), the consistency proof that a tree is the continuation of an older one,
// whatever was appended (§2.1.4): a log that removed, changed or reordered an entry cannot produce one.
// Trees are given as their leaves' hashes (in order); every function here takes them, not the entries.
import { createHash } from 'node:crypto';

export type Hash = Buffer;

/** SHA-256(0x00 || data): the hash of a leaf. */
export function leafHash(data: Uint8Array): Hash {
  return createHash('sha256').update(Buffer.of(0)).update(data).digest();
}

/** SHA-256(0x01 || left || right): the hash of an inner node. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Hash {
  return createHash('sha256').update(Buffer.of(1)).update(left).update(right).digest();
}

/** The largest power of two below n (n > 1): where a tree of n leaves splits. */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The hashes of complete subtrees (2^k leaves from a multiple of 2^k), which never change once their leaves are
 * there: a log that keeps one computes roots and proofs of a growing tree in about log² n hashes, not n.
 */
export type SubtreeCache = Map<string, Hash>;

const CACHED_FROM = 32;

/** MTH(D[lo:hi]): the root of the leaves from lo to hi (SHA-256 of nothing for no leaves). */
export function rootHash(leaves: readonly Hash[], lo = 0, hi = leaves.length, cache?: SubtreeCache): Hash {
  const n = hi - lo;
  if (n === 0) return createHash('sha256').digest();
  if (n === 1) return leaves[lo]!;
  // Subtrees of fewer than CACHED_FROM leaves are hashed again when asked for: the cache holds about 2n / CACHED_FROM hashes.
  const complete = cache !== undefined && n >= CACHED_FROM && (n & (n - 1)) === 0;
  const key = `${lo}/${n}`;
  const known = complete ? cache.get(key) : undefined;
  if (known) return known;
  const k = split(n);
  const root = nodeHash(rootHash(leaves, lo, lo + k, cache), rootHash(leaves, lo + k, hi, cache));
  if (complete) cache.set(key, root);
  return root;
}

/**
 * The root of a growing tree without its leaves: the roots of the perfect subtrees that make it up, largest first
 * (one per bit of the size, so at most log2(n) + 1 hashes). Merging them from the right gives MTH: the largest
 * perfect subtree is the left part of the split at the largest power of two below n, the rest is the right part.
 * A reader of a record of any size keeps this, not its leaves.
 */
export class CompactRange {
  private readonly roots: { size: number; hash: Hash }[] = [];
  private count = 0;

  /** How many leaves were appended. */
  get size(): number {
    return this.count;
  }

  /** Appends the next leaf's hash: equal-sized subtrees at the end merge into one twice their size. */
  append(leaf: Hash): void {
    let top = { size: 1, hash: leaf };
    for (let last = this.roots.at(-1); last?.size === top.size; last = this.roots.at(-1)) {
      this.roots.pop();
      top = { size: top.size * 2, hash: nodeHash(last.hash, top.hash) };
    }
    this.roots.push(top);
    this.count += 1;
  }

  /** MTH of the leaves appended so far (rootHash of them). */
  root(): Hash {
    if (this.roots.length === 0) return createHash('sha256').digest();
    let root = this.roots[this.roots.length - 1]!.hash;
    for (let i = this.roots.length - 2; i >= 0; i--) root = nodeHash(this.roots[i]!.hash, root);
    return root;
  }
}

function checkSize(what: string, value: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > max) throw new RangeError(`${what} ${value} is not a whole number from 0 to ${max}`);
}

/** PATH(index, D[0:size]): the inclusion proof of leaf `index` in the tree of the first `size` leaves (§2.1.3.1). */
export function inclusionProof(leaves: readonly Hash[], index: number, size = leaves.length, cache?: SubtreeCache): Hash[] {
  checkSize('tree size', size, leaves.length);
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) throw new RangeError(`leaf index ${index} is not in a tree of ${size} leaves`);
  const path = (m: number, lo: number, hi: number): Hash[] => {
    const n = hi - lo;
    if (n <= 1) return [];
    const k = split(n);
    return m < k ? [...path(m, lo, lo + k), rootHash(leaves, lo + k, hi, cache)] : [...path(m - k, lo + k, hi), rootHash(leaves, lo, lo + k, cache)];
  };
  return path(index, 0, size);
}

/** PROOF(from, D[0:to]): the consistency proof between the trees of the first `from` and `to` leaves (§2.1.4.1). */
export function consistencyProof(leaves: readonly Hash[], from: number, to = leaves.length, cache?: SubtreeCache): Hash[] {
  checkSize('tree size', to, leaves.length);
  checkSize('older tree size', from, to);
  if (from === 0 || from === to) return [];
  const subproof = (m: number, lo: number, hi: number, whole: boolean): Hash[] => {
    const n = hi - lo;
    if (m === n) return whole ? [] : [rootHash(leaves, lo, hi, cache)];
    const k = split(n);
    return m <= k
      ? [...subproof(m, lo, lo + k, whole), rootHash(leaves, lo + k, hi, cache)]
      : [...subproof(m - k, lo + k, hi, false), rootHash(leaves, lo, lo + k, cache)];
  };
  return subproof(from, 0, to, true);
}

/** Whether `proof` shows leaf `index` (of hash `leaf`) in the tree of `size` leaves with `root` (§2.1.3.2). */
export function verifyInclusion(leaf: Uint8Array, index: number, size: number, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r: Uint8Array = leaf;
  for (const p of proof) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      r = nodeHash(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && Buffer.from(r).equals(Buffer.from(root));
}

/** Whether `proof` shows the tree of `to` leaves with `toRoot` to continue the one of `from` leaves with `fromRoot` (§2.1.4.2). */
export function verifyConsistency(from: number, to: number, fromRoot: Uint8Array, toRoot: Uint8Array, proof: readonly Uint8Array[]): boolean {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || from > to) return false;
  if (from === to) return proof.length === 0 && Buffer.from(fromRoot).equals(Buffer.from(toRoot));
  if (from === 0) return proof.length === 0; // every tree continues the empty one
  if (proof.length === 0) return false;
  const path = (BigInt(from) & BigInt(from - 1)) === 0n ? [fromRoot, ...proof] : [...proof];
  let fn = BigInt(from - 1);
  let sn = BigInt(to - 1);
  while ((fn & 1n) === 1n) {
    fn >>= 1n;
    sn >>= 1n;
  }
  let fr: Uint8Array = path[0]!;
  let sr: Uint8Array = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while ((fn & 1n) === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n && Buffer.from(fr).equals(Buffer.from(fromRoot)) && Buffer.from(sr).equals(Buffer.from(toRoot));
}
