// SG203 already-signed: validly signed with one of the organization's keys; no upload needed.
import { sameKeyBlob } from '../strongname/key-blob.js';
import { defineRule } from './types.js';

/** Which key SG203 found, from its finding's data: the check's message and sign's reason for not uploading say it so. */
export function signedWithKey(data: Readonly<Record<string, unknown>> | undefined): string {
  const optionId = data?.optionId;
  return `with key token ${String(data?.token)}${typeof optionId === 'number' ? ` (option ${optionId})` : ''}`;
}

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
    const data = { token: key.token, optionId: key.optionId };
    return [
      {
        message: `already signed ${signedWithKey(data)}`,
        ...(status.slot ? { location: { fileOffset: status.slot.fileOffset, length: status.slot.size } } : {}),
        data,
      },
    ];
  },
});
