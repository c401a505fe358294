// SG206 signature-slot-size: the reserved slot does not match the key size.
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG206',
  name: 'signature-slot-size',
  scope: 'file',
  defaultSeverity: 'error',
  summary: 'The signature slot reserved in the CLI header is not the size the key needs (128 bytes for 1024-bit keys, 256 for 2048-bit).',
  hint: 'Rebuild delay-signed with the public key file you will be signed with; the compiler sizes the slot from that key.',
  check: ({ facts }) => {
    const status = facts.status();
    const key = status.publicKey;
    if (!status.slot || !key || key.isEcmaKey || !status.details.includes('slot-size-mismatch')) return [];
    return [
      {
        message: `the signature slot is ${status.slot.size} bytes, but the ${key.bitLength}-bit key needs ${key.bitLength / 8}`,
        location: { fileOffset: status.slot.fileOffset, length: status.slot.size },
        data: { slotSize: status.slot.size, keyBits: key.bitLength },
      },
    ];
  },
});
