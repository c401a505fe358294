// The stored tree (src/record/stored-tree.ts) against the in-memory one (merkle.ts): over the same leaves, the roots
// and proofs read from stored hashes are byte for byte those computed from every leaf, and the storage order is Go
// tlog's (the indexes below are tlog's StoredHashIndex and StoredHashCount; test/record/go-sumdb.test.ts has tlog
// itself agree with our proofs).
import { describe, expect, test } from 'vitest';
import { consistencyProof, inclusionProof, leafHash, rootHash, type Hash } from '../../src/record/merkle.js';
import {
  leavesIn,
  storedConsistencyProof,
  storedHashCount,
  storedHashesForLeaf,
  storedHashIndex,
  storedInclusionProof,
  storedTreeRoot,
  type HashReader,
} from '../../src/record/stored-tree.js';

/** The stored hashes of `leaves`, built a leaf at a time as a log appends, and a reader that counts what it reads. */
async function store(leaves: readonly Hash[]): Promise<{ hashes: Hash[]; read: HashReader; reads: () => number }> {
  const hashes: Hash[] = [];
  let reads = 0;
  const read: HashReader = async (indexes) =>
    indexes.map((i) => {
      reads += 1;
      const h = hashes[i];
      if (!h) throw new Error(`hash ${i} is not stored`);
      return h;
    });
  for (let n = 0; n < leaves.length; n++) {
    expect(hashes.length).toBe(storedHashCount(n));
    hashes.push(...(await storedHashesForLeaf(n, leaves[n]!, read)));
  }
  reads = 0;
  return { hashes, read, reads: () => reads };
}

const leavesOf = (n: number) => Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`entry ${i}`)));

describe('the stored tree', () => {
  test("indexes and counts are Go tlog's", () => {
    const order = [
      [0, 0],
      [0, 1],
      [1, 0],
      [0, 2],
      [0, 3],
      [1, 1],
      [2, 0],
      [0, 4],
    ];
    expect(order.map(([level, n]) => storedHashIndex(level!, n!))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect([0, 1, 2, 3, 4, 5, 8, 1024].map(storedHashCount)).toEqual([0, 1, 3, 4, 7, 8, 15, 2047]);
    for (const n of [0, 1, 2, 3, 4, 7, 8, 100, 12_345]) {
      expect(leavesIn(storedHashCount(n))).toBe(n);
      if (storedHashCount(n + 1) - storedHashCount(n) > 1) expect(leavesIn(storedHashCount(n) + 1)).toBe(n); // cut off within leaf n's hashes
    }
  });

  test('roots and proofs equal those of every leaf in memory, for every size up to 40 and around 64', async () => {
    const leaves = leavesOf(70);
    const { read } = await store(leaves);
    for (const size of [...Array.from({ length: 41 }, (_, i) => i), 63, 64, 65, 70]) {
      expect((await storedTreeRoot(size, read)).equals(rootHash(leaves, 0, size))).toBe(true);
      for (let i = 0; i < size; i++) expect(await storedInclusionProof(i, size, read)).toEqual(inclusionProof(leaves, i, size));
      for (let from = 0; from <= size; from++) expect(await storedConsistencyProof(from, size, read)).toEqual(consistencyProof(leaves, from, size));
    }
  });

  test('a proof in a larger tree reads O(log n) hashes', async () => {
    const size = 5_000;
    const leaves = leavesOf(size);
    const stored = await store(leaves);
    const before = stored.reads();
    expect(await storedInclusionProof(1_234, size, stored.read)).toEqual(inclusionProof(leaves, 1_234, size));
    expect(await storedConsistencyProof(3_333, size, stored.read)).toEqual(consistencyProof(leaves, 3_333, size));
    expect(stored.reads() - before).toBeLessThanOrEqual(4 * Math.ceil(Math.log2(size)));
  });

  test('a hash that is not stored is an error, and arguments out of range are refused', async () => {
    const { hashes, read } = await store(leavesOf(8));
    const short: HashReader = (indexes) => read(indexes.map((i) => (i >= hashes.length - 1 ? hashes.length + 10 : i)));
    await expect(storedTreeRoot(8, short)).rejects.toThrow(/is not stored/);
    await expect(storedInclusionProof(8, 8, read)).rejects.toThrow(RangeError);
    await expect(storedConsistencyProof(5, 4, read)).rejects.toThrow(RangeError);
  });
});
