// SG204 invalid-signature: a signature slot that holds bytes which do not verify, or a key with no slot.
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG204',
  name: 'invalid-signature',
  scope: 'file',
  defaultSeverity: 'error',
  summary: 'The signature slot holds a signature that does not verify (the file was changed after signing), or there is no slot.',
  hint: 'Upload the delay-signed output of the build, not a file that was signed and then modified (by an obfuscator, ILMerge, a resource or version patcher).',
  check: ({ facts }) => {
    const status = facts.status();
    if (status.state !== 'invalid-signature') return [];
    return [
      {
        message: status.description,
        ...(status.slot ? { location: { fileOffset: status.slot.fileOffset, length: status.slot.size } } : {}),
        data: { details: status.details },
      },
    ];
  },
});
