// What the audit reads from each file itself: hash, identity, the strong name verified against the organization's
// keys, the vendor attribute, the load verdict and Authenticode, as plain data (made in this thread or a worker).
import { createHash } from 'node:crypto';
import { isSignGateError } from '../core/errors.js';
import { formatVersion } from '../metadata/module-metadata.js';
import { publicKeyToken } from '../strongname/key-token.js';
import { sameKeyBlob } from '../strongname/key-blob.js';
import { needsSigning, type CheckSettings, type FileFacts } from '../rules/types.js';
import { vendorAttributeState, type VendorAttributeState } from '../rules/vendor-attribute.js';
import { loadsUnder, loadVerdict } from '../rules/load.js';
import { authenticodeOf, authenticodeVerdict, type AuthenticodeVerdict } from '../authenticode/verdict.js';
import type { AuditFile, AuditLoad } from './model.js';

/** "option 12345's key (token 5d00…)" or "the key with token 5d00…" */
export function describeKey(k: { optionId: number | null; token: string }): string {
  return k.optionId !== null ? `the key of option ${k.optionId} (token ${k.token})` : `the key with token ${k.token}`;
}

/**
 * The strong-name state in the words of a release manager: signed by the service or not, and with whose key.
 * Wording only; the state and key match stay in the report as data.
 */
export function describeVerdict(state: string | null, key: 'expected' | 'other' | 'none', token: string | null, optionId: number | null): string {
  const other = `another key (token ${token ?? 'unknown'}), not the organization's`;
  switch (state) {
    case null:
      return 'not a readable .NET assembly';
    case 'unsigned':
      return 'not strong-named: no public key at all';
    case 'delay-signed':
      return key === 'expected' ? 'delay-signed with the right key, but never signed by the service' : `delay-signed with ${other}`;
    case 'public-signed':
      return key === 'expected' ? 'public-signed with the right key: no real signature, never signed by the service' : `public-signed with ${other}`;
    case 'signed':
      return key === 'expected'
        ? `signed by the service with the organization's key${optionId !== null ? ` for option ${optionId}` : ''}`
        : `signed, but with ${other}`;
    case 'invalid-signature':
      return key === 'expected'
        ? 'signed with the right key, but changed after signing: the signature does not match the bytes'
        : `broken signature, and with ${other}`;
    default:
      return state;
  }
}

/** What the verdict of a ReadyToRun image adds: why its strong name fails, and what vouches for it instead. */
function readyToRunNote(authenticode: AuthenticodeVerdict | null): string {
  const by = authenticode?.publisher ? ` by ${authenticode.publisher}` : '';
  const vouch =
    authenticode && authenticode.state !== 'absent' ? `its Authenticode signature${by} is ${authenticode.state}` : 'and it has no Authenticode signature';
  return `; precompiled (ReadyToRun) after signing, so no strong-name signature covers it: ${vouch}`;
}

/** What the audit reads from one file itself: plain data, the same whether made in this thread or in a worker thread. */
export interface AuditEvidence {
  readonly sha256: string;
  readonly assembly: AuditFile['assembly'];
  readonly strongName: AuditFile['strongName'];
  readonly verdict: string;
  readonly vendorAttribute: VendorAttributeState;
  readonly load: AuditLoad | null;
  readonly authenticode: AuthenticodeVerdict | null;
  /** Errors met while reading the vendor attribute or the load verdict (both are then left out): malformed findings. */
  readonly errors: readonly { readonly code: string; readonly message: string; readonly while: string }[];
}

/** Hash, identity, verified strong name, vendor attribute, load verdict and Authenticode of one file. */
export function auditEvidence(f: FileFacts, settings: CheckSettings): AuditEvidence {
  const input = f.input;
  const sha256 = createHash('sha256').update(input.bytes).digest('hex');
  const status = f.module ? f.status() : undefined;
  const assembly = f.module?.assembly;
  const key = status?.publicKey ? settings.keys.find((k) => sameKeyBlob(k.publicKey, status.publicKey!)) : undefined;
  const signedWithExpectedKey = status?.state === 'signed' && key !== undefined;
  const keyMatch = key ? 'expected' : status?.publicKey ? 'other' : 'none';
  // Attributes that cannot be decoded stop neither the audit nor the other files: the file gets a malformed finding.
  const errors: AuditEvidence['errors'][number][] = [];
  const unlessUnreadable = <T, U>(what: string, read: () => T, otherwise: U): T | U => {
    try {
      return read();
    } catch (error) {
      if (!isSignGateError(error)) throw error;
      errors.push({ code: error.code, message: error.message, while: what });
      return otherwise;
    }
  };
  const willLoad = unlessUnreadable('reading the load verdict', () => loadVerdict(f, settings), undefined);
  const authenticode = f.module ? authenticodeVerdict(f.authenticode()) : authenticodeOf(input.bytes);
  const vendorAttribute =
    needsSigning(f.role) || f.role.kind === 'unreadable'
      ? unlessUnreadable('reading the vendor attribute', () => vendorAttributeState(f, settings), 'unreadable' as const)
      : 'not-required';
  return {
    sha256,
    assembly: assembly
      ? {
          name: assembly.name,
          version: formatVersion(assembly.version),
          culture: assembly.culture,
          publicKeyToken: assembly.publicKey.length ? publicKeyToken(assembly.publicKey) : null,
        }
      : null,
    strongName: status
      ? {
          state: status.state,
          keyBits: status.keyBits,
          hashAlgorithm: status.hashAlgorithm,
          signedWithExpectedKey,
          key: keyMatch,
          signatureValid: status.signatureValid,
          optionId: key?.optionId ?? null,
        }
      : null,
    verdict:
      describeVerdict(status?.state ?? null, keyMatch, status?.publicKeyToken ?? null, key?.optionId ?? null) +
      (status?.details.includes('ready-to-run') ? readyToRunNote(authenticode) : ''),
    vendorAttribute,
    load: willLoad ? { ...willLoad, loadsUnder: loadsUnder(willLoad) } : null,
    authenticode,
    errors,
  };
}
