// PE checksum compatible with imagehlp's CheckSumMappedFile (strong-naming.md section 7.8).

/**
 * Sums the file as 16-bit little-endian words with end-around carry, skipping the 4 CheckSum bytes,
 * then adds the file length.
 */
export function computePeChecksum(bytes: Uint8Array, checkSumFileOffset: number): number {
  let sum = 0;
  const len = bytes.length;
  const even = len & ~1;
  for (let i = 0; i < even; i += 2) {
    if (i === checkSumFileOffset || i === checkSumFileOffset + 2) continue;
    sum += bytes[i]! | (bytes[i + 1]! << 8);
    // Folding every step keeps the sum within 17 bits; doing it lazily is no faster in V8.
    sum = (sum & 0xffff) + (sum >>> 16);
  }
  if (len & 1) {
    sum += bytes[len - 1]!;
    sum = (sum & 0xffff) + (sum >>> 16);
  }
  sum = (sum & 0xffff) + (sum >>> 16);
  return (sum + len) >>> 0;
}
