// A returned file's verdict: signed with the organization's key, the same identity, and changed in nothing but its
// signature, flag and checksum (a netmodule: byte for byte). sign and sign --archive judge every file with it.
import { formatVersion } from '../metadata/module-metadata.js';
import type { ExpectedKey } from '../rules/types.js';
import { ClientFileState, isFailedState } from '../core/file-states.js';
import { sameKeyBlob } from '../strongname/key-blob.js';
import { readModule } from '../strongname/well-formed.js';
import { compareIgnoringSignature, verifyStrongName } from '../strongname/strong-name.js';

/** Why a returned file is not what was ordered, or null when it is signed correctly and changed in nothing else. */
export function checkReturnedFile(uploaded: Uint8Array, returned: Uint8Array, keys: readonly ExpectedKey[]): string | null {
  let before;
  let after;
  try {
    before = readModule(uploaded);
    after = readModule(returned);
  } catch (error) {
    return `the returned file cannot be read: ${(error as Error).message}`;
  }
  const a = before.assembly;
  const b = after.assembly;
  if (!a || !b) return 'the returned file has no assembly manifest';
  if (a.name !== b.name || formatVersion(a.version) !== formatVersion(b.version) || a.culture !== b.culture || !sameKeyBlob(a.publicKey, b.publicKey)) {
    return `the identity changed: ${a.name} ${formatVersion(a.version)} became ${b.name} ${formatVersion(b.version)}`;
  }
  const key = keys.find((k) => sameKeyBlob(k.publicKey, b.publicKey));
  if (!key) return "the returned file is not signed with one of the organization's keys";
  const verification = verifyStrongName(after, { expectedKey: key.publicKey });
  if (!verification.valid) return `the signature does not verify: ${verification.reason}`;
  const diff = compareIgnoringSignature(before, returned);
  if (!diff.onlySignatureDiffers) return `the returned file differs in more than its signature, flag and checksum (first at ${diff.firstDifference?.where})`;
  return null;
}

/**
 * A file's verdict: from what came back, not from the state's name; a failed state is believed, an unknown one shown.
 * A netmodule (`netmodule`) is not signed: it must come back byte for byte, or its manifest's File-table hash breaks.
 */
export function fileVerdict(
  state: string,
  uploaded: Uint8Array,
  returned: Uint8Array | undefined,
  keys: readonly ExpectedKey[],
  netmodule = false,
): string | null {
  if (isFailedState(state)) return `the service reports ${state}`;
  if (!returned) return 'the result package does not contain the file';
  const reason = netmodule
    ? Buffer.compare(Buffer.from(uploaded), Buffer.from(returned)) === 0
      ? null
      : "the netmodule came back changed; the hash its assembly's File table records no longer matches"
    : checkReturnedFile(uploaded, returned, keys);
  return reason === null ? null : state === ClientFileState.Missing ? `the service did not report the file, and ${reason}` : reason;
}
