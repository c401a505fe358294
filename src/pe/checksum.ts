// PE checksum compatible with imagehlp's CheckSumMappedFile (strong-naming.md section 7.8).

/**
 * Sums the file as 16-bit little-endian words with end-around carry, skipping the 4 CheckSum bytes,
 * then adds the file length. A ones'-complement sum can be folded once at the end instead of after
 * every word: a double holds the plain sum of 2^37 words exactly.
 */
export function computePeChecksum(bytes: Uint8Array, checkSumFileOffset: number): number {
  const len = bytes.length;
  const words = len >>> 1;
  let sum = 0;
  if (bytes.byteOffset % 4 === 0 && isLittleEndianHost) {
    // Two words per read: half the loop iterations of a Uint16Array, the same sum.
    const pairs = words >>> 1;
    const u32 = new Uint32Array(bytes.buffer, bytes.byteOffset, pairs);
    for (let i = 0; i < pairs; i++) {
      const v = u32[i]!;
      sum += (v & 0xffff) + (v >>> 16);
    }
    if (words & 1) sum += bytes[pairs * 4]! | (bytes[pairs * 4 + 1]! << 8);
  } else if (bytes.byteOffset % 2 === 0 && isLittleEndianHost) {
    const u16 = new Uint16Array(bytes.buffer, bytes.byteOffset, words);
    for (let i = 0; i < words; i++) sum += u16[i]!;
  } else {
    for (let i = 0; i < words * 2; i += 2) sum += bytes[i]! | (bytes[i + 1]! << 8);
  }
  // Take the CheckSum field back out (it may sit at an odd offset in a hostile file).
  if (checkSumFileOffset >= 0 && checkSumFileOffset + 4 <= len) {
    if (checkSumFileOffset % 2 === 0) {
      sum -= (bytes[checkSumFileOffset]! | (bytes[checkSumFileOffset + 1]! << 8)) + (bytes[checkSumFileOffset + 2]! | (bytes[checkSumFileOffset + 3]! << 8));
    }
  }
  if (len & 1) sum += bytes[len - 1]!;
  while (sum > 0xffff) sum = (sum % 0x10000) + Math.floor(sum / 0x10000);
  return (sum + len) >>> 0;
}

const isLittleEndianHost = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
