// The Merkle tree of RFC 9162 §2.1: the Certificate Transparency test vectors (roots of the first 0..8 leaves,
// inclusion and consistency proofs), then every proof of trees up to 40 leaves against an independent, naive
// implementation (levels of pairs, an odd last node carried up unchanged, which is the same tree), and proofs that
// must not verify: another leaf, another index, another size, a changed or shortened proof, a rewritten old tree;
// and the root of a compact range, which keeps the roots of a tree's perfect subtrees instead of its leaves.
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { CompactRange, consistencyProof, inclusionProof, leafHash, nodeHash, rootHash, verifyConsistency, verifyInclusion } from '../../src/record/merkle.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (h: string) => Buffer.from(h, 'hex');
const CT_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map((h) => leafHash(unhex(h)));
const CT_ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

/** The naive tree: hash pairs level by level, an odd last node goes up as it is. */
function naiveRoot(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return createHash('sha256').digest();
  let level = [...leaves];
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2)
      next.push(
        i + 1 < level.length
          ? createHash('sha256')
              .update(Buffer.of(1))
              .update(level[i]!)
              .update(level[i + 1]!)
              .digest()
          : level[i]!,
      );
    level = next;
  }
  return level[0]!;
}

describe('the Merkle tree of RFC 9162', () => {
  test('the Certificate Transparency vectors: roots of 0..8 leaves, inclusion and consistency proofs', () => {
    for (let n = 0; n <= 8; n++) expect(hex(rootHash(CT_LEAVES.slice(0, n))), `size ${n}`).toBe(CT_ROOTS[n]);
    expect(hex(nodeHash(CT_LEAVES[0]!, CT_LEAVES[1]!))).toBe(CT_ROOTS[2]);
    const inclusion: [number, number, string[]][] = [
      [
        0,
        8,
        [
          '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
          '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
          '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
        ],
      ],
      [
        5,
        8,
        [
          'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
          'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
          'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
        ],
      ],
      [2, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
    ];
    for (const [index, size, proof] of inclusion) {
      expect(inclusionProof(CT_LEAVES, index, size).map(hex), `leaf ${index} of ${size}`).toEqual(proof);
      expect(verifyInclusion(CT_LEAVES[index]!, index, size, proof.map(unhex), unhex(CT_ROOTS[size]!))).toBe(true);
    }
    const consistency: [number, number, string[]][] = [
      [
        1,
        8,
        [
          '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
          '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
          '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
        ],
      ],
      [
        6,
        8,
        [
          '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
          'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
          'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
        ],
      ],
      [2, 5, ['5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b']],
    ];
    for (const [from, to, proof] of consistency) {
      expect(consistencyProof(CT_LEAVES, from, to).map(hex), `${from} to ${to}`).toEqual(proof);
      expect(verifyConsistency(from, to, unhex(CT_ROOTS[from]!), unhex(CT_ROOTS[to]!), proof.map(unhex))).toBe(true);
    }
  });

  test('every tree up to 40 leaves: the root is the naive one, every inclusion and consistency proof verifies, altered ones do not', () => {
    const leaves = Array.from({ length: 40 }, (_, i) => leafHash(Buffer.from(`entry ${i}`)));
    const roots = Array.from({ length: 41 }, (_, n) => naiveRoot(leaves.slice(0, n)));
    for (let size = 0; size <= 40; size++) {
      expect(rootHash(leaves, 0, size).equals(roots[size]!), `root of ${size}`).toBe(true);
      for (let index = 0; index < size; index++) {
        const proof = inclusionProof(leaves, index, size);
        expect(verifyInclusion(leaves[index]!, index, size, proof, roots[size]!), `leaf ${index} of ${size}`).toBe(true);
        expect(verifyInclusion(leaves[(index + 1) % 40]!, index, size, proof, roots[size]!)).toBe(false);
        if (size > 1) {
          expect(verifyInclusion(leaves[index]!, (index + 1) % size, size, proof, roots[size]!)).toBe(false);
          expect(verifyInclusion(leaves[index]!, index, size, proof.slice(1), roots[size]!)).toBe(false);
          const bent = proof.map((p, i) => (i === proof.length - 1 ? nodeHash(p, p) : p));
          expect(verifyInclusion(leaves[index]!, index, size, bent, roots[size]!)).toBe(false);
        }
        expect(verifyInclusion(leaves[index]!, index, size, proof, roots[size + 1] ?? roots[0]!)).toBe(false);
      }
      for (let from = 0; from <= size; from++) {
        const proof = consistencyProof(leaves, from, size);
        expect(verifyConsistency(from, size, roots[from]!, roots[size]!, proof), `${from} to ${size}`).toBe(true);
        if (from > 0 && from < size) {
          // The old tree rewritten (another leaf in it): its root no longer fits the proof.
          const rewritten = naiveRoot([...leaves.slice(0, from - 1), leafHash(Buffer.from('forged'))]);
          expect(verifyConsistency(from, size, rewritten, roots[size]!, proof)).toBe(false);
          expect(verifyConsistency(from, size, roots[from]!, roots[size - 1]!, proof)).toBe(false);
          expect(verifyConsistency(from, size, roots[from]!, roots[size]!, proof.slice(0, -1))).toBe(false);
        }
      }
    }
  });

  test('with a cache of complete subtrees (a growing log): the same roots and proofs', () => {
    const cache = new Map();
    const leaves: Buffer[] = [];
    for (let i = 0; i < 70; i++) {
      leaves.push(leafHash(Buffer.from(`entry ${i}`)));
      expect(rootHash(leaves, 0, leaves.length, cache).equals(naiveRoot(leaves))).toBe(true);
      expect(inclusionProof(leaves, i >> 1, leaves.length, cache)).toEqual(inclusionProof(leaves, i >> 1));
      expect(consistencyProof(leaves, i >> 1, leaves.length, cache)).toEqual(consistencyProof(leaves, i >> 1));
    }
  });

  test('a compact range (a reader that keeps no leaf): the root of every size up to 300, from at most log2(n) + 1 subtree hashes', () => {
    const range = new CompactRange();
    const leaves: Buffer[] = [];
    expect(hex(range.root())).toBe(CT_ROOTS[0]);
    for (let i = 0; i < 300; i++) {
      leaves.push(i < 8 ? CT_LEAVES[i]! : leafHash(Buffer.from(`entry ${i}`)));
      range.append(leaves[i]!);
      expect(range.size).toBe(i + 1);
      expect(hex(range.root()), `size ${i + 1}`).toBe(i < 8 ? CT_ROOTS[i + 1] : hex(naiveRoot(leaves)));
      // One subtree per bit of the size.
      expect((range as unknown as { roots: unknown[] }).roots.length).toBe((i + 1).toString(2).replace(/0/g, '').length);
    }
  });

  test('sizes and indexes out of range are refused', () => {
    expect(() => inclusionProof(CT_LEAVES, 8, 8)).toThrow(/leaf index 8 is not in a tree of 8 leaves/);
    expect(() => consistencyProof(CT_LEAVES, 9, 8)).toThrow(/older tree size 9 is not a whole number from 0 to 8/);
    expect(verifyConsistency(8, 6, unhex(CT_ROOTS[8]!), unhex(CT_ROOTS[6]!), [])).toBe(false);
  });
});
