// SG202 public-signed: STRONGNAMESIGNED set over an empty signature slot.
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG202',
  name: 'public-signed',
  scope: 'file',
  defaultSeverity: 'error',
  summary: 'The assembly is public-signed (OSS signing): the signed flag is set but the signature slot is empty.',
  hint: 'Build delay-signed instead of public-signed: remove <PublicSign>true</PublicSign> and set <DelaySign>true</DelaySign>.',
  check: ({ facts }) => {
    const status = facts.status();
    if (status.state !== 'public-signed') return [];
    return [
      {
        message: 'the STRONGNAMESIGNED flag is set but the signature slot is empty (public signing); the service expects a delay-signed assembly',
        ...(status.slot ? { location: { fileOffset: status.slot.fileOffset, length: status.slot.size } } : {}),
      },
    ];
  },
});
