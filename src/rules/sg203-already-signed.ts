// SG203 already-signed: validly signed with one of the organization's keys; no upload needed.
import { sameKeyBlob } from './key-match.js';
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG203',
  name: 'already-signed',
  scope: 'file',
  defaultSeverity: 'warning',
  summary: "The assembly is already validly signed with the organization's key; it needs no new upload.",
  hint: 'Nothing to do: `signgate sign` skips it. Upload the delay-signed build output instead if this file was copied from an earlier result.',
  check: ({ facts, settings }) => {
    const status = facts.status();
    if (status.state !== 'signed' || !status.publicKey) return [];
    const key = settings.keys.find((k) => sameKeyBlob(k.publicKey, status.publicKey!));
    if (!key || key.keyPair) return []; // signed with another key, or with a key pair given as a key file: wrong-key reports it
    return [
      {
        message: `already signed with key token ${key.token}${key.optionId !== null ? ` (option ${key.optionId})` : ''}`,
        ...(status.slot ? { location: { fileOffset: status.slot.fileOffset, length: status.slot.size } } : {}),
        data: { token: key.token },
      },
    ];
  },
});
