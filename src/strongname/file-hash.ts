// The hash a manifest records for each file of a multi-module assembly (ECMA-335 II.22.19 File.HashValue, computed
// over the whole file with the Assembly row's HashAlgId, II.23.1.1). The strong-name signature covers these hashes,
// so a netmodule changed after linking breaks the assembly even when the manifest's own bytes are untouched.
import { createHash } from 'node:crypto';

/** AssemblyHashAlgorithm values (II.23.1.1) and the node:crypto names of their digests. */
const FILE_HASH_ALGORITHMS: Readonly<Record<number, string>> = {
  0x8003: 'md5',
  0x8004: 'sha1',
  0x800c: 'sha256',
  0x800d: 'sha384',
  0x800e: 'sha512',
};

/** The digest name for an Assembly row's HashAlgId; HashAlgId 0 (None) means SHA-1, as the runtime reads it. */
export function findFileHashAlgorithm(hashAlgId: number): string | undefined {
  return FILE_HASH_ALGORITHMS[hashAlgId === 0 ? 0x8004 : hashAlgId];
}

/** The file's hash as a File row's HashValue holds it. */
export function computeFileHash(bytes: Uint8Array, algorithm: string): Uint8Array {
  return new Uint8Array(createHash(algorithm).update(bytes).digest());
}
