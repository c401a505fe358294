// Strong-name hashing, verification, signing and state classification
// (strong-naming.md sections 7.3-7.8 and 8).
import { createHash, createSign, createVerify, type KeyObject } from 'node:crypto';
import { FormatError, KeyError, SignGateError, hex } from '../core/errors.js';
import type { ModuleMetadata } from '../metadata/module-metadata.js';
import { computePeChecksum } from '../pe/checksum.js';
import { CorFlags, readReadyToRunHeader } from '../pe/cor-header.js';
import { parsePeImage } from '../pe/pe-image.js';
import {
  MICROSOFT_PLATFORM_KEY,
  parsePublicKeyBlob,
  sameKeyBlob,
  sameRsaKey,
  type HashAlgorithm,
  type PublicKeyInfo,
  type StrongNameKeyFile,
} from './key-blob.js';
import { knownKey, knownKeyObject } from './known-keys.js';
import { tokenSigner } from './pkcs11/signer.js';
import { assertHeadersOutsideSections, getSignatureSlot, signedContent, type SignatureSlot } from './signed-content.js';
import { publicKeyToken } from './key-token.js';

/** The five states of section 7.6, decided by content, not by the flag alone. */
export const StrongNameStates = ['unsigned', 'delay-signed', 'public-signed', 'signed', 'invalid-signature'] as const;
export type StrongNameState = (typeof StrongNameStates)[number];

/** Odd shapes that a state alone does not tell. */
export type StrongNameDetail =
  | 'flag-clear' // valid signature with STRONGNAMESIGNED clear (Mono's sn -R)
  | 'key-without-slot' // public key but no signature slot
  | 'slot-without-key' // signature slot but no public key
  | 'flag-without-key' // STRONGNAMESIGNED set but no public key
  | 'slot-size-mismatch' // slot size differs from the key's modulus length
  | 'ecma-key' // the ECMA neutral key (verified against the platform key)
  | 'mapped-key' // verified with a key substituted through keyMap
  | 'signature-key-attribute' // AssemblySignatureKeyAttribute (enhanced strong naming)
  | 'ready-to-run' // precompiled by crossgen after signing: the signature does not cover the image
  | 'not-verified'; // non-zero slot, verification skipped

export const SIGNATURE_KEY_ATTRIBUTE = 'System.Reflection.AssemblySignatureKeyAttribute';

/** Token of the ECMA neutral key, which verifiers replace with the Microsoft platform key. */
export const ECMA_KEY_TOKEN = 'b77a5c561934e089';

export interface VerifyOptions {
  /**
   * Public keys to verify with instead of the assembly's own, by the assembly's token (lower-case hex).
   * The default maps the ECMA key to the Microsoft platform key. Mono maps more tokens to its own key
   * in machine.config (`<strongNames><pubTokenMapping>`); pass that map to reproduce Mono's verdicts.
   */
  readonly keyMap?: ReadonlyMap<string, Uint8Array>;
}

export const DEFAULT_KEY_MAP: ReadonlyMap<string, Uint8Array> = new Map([[ECMA_KEY_TOKEN, MICROSOFT_PLATFORM_KEY]]);

export interface StrongNameStatus {
  readonly state: StrongNameState;
  readonly details: readonly StrongNameDetail[];
  /** Human sentence for the state and details. */
  readonly description: string;
  readonly flagSet: boolean;
  readonly slot: SignatureSlot | null;
  readonly publicKey: PublicKeyInfo | null;
  readonly publicKeyToken: string | null;
  /** RSA key size of the key that signs (the signature key when enhanced strong naming is used). */
  readonly keyBits: number | null;
  readonly hashAlgorithm: HashAlgorithm | null;
  /** True/false once verified; null when the slot was empty or verification was skipped. */
  readonly signatureValid: boolean | null;
  /** Why verification failed, when it did. */
  readonly failure: string | null;
}

/** Hash of the signed content with the given algorithm. */
export function computeStrongNameHash(module: ModuleMetadata, slot: SignatureSlot, algorithm: HashAlgorithm): Buffer {
  const hash = createHash(algorithm);
  for (const chunk of signedContent(module.image, slot)) hash.update(chunk);
  return hash.digest();
}

function isAllZero(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] !== 0) return false;
  return true;
}

interface SigningKey {
  readonly key: PublicKeyInfo;
  readonly keyObject: KeyObject;
  readonly detail: StrongNameDetail | undefined;
}

/**
 * The key that verifies the file, as the runtime chooses it: the AssemblySignatureKeyAttribute key once its
 * counter-signature checks out with the identity key, else the identity key. A key from keyMap (the ECMA key's
 * platform key) stands in for the identity key wherever the identity key itself is used: for the
 * counter-signature of an enhanced strong name, or for the signature when there is none.
 */
function resolveSignatureKey(module: ModuleMetadata, identity: PublicKeyInfo, token: string, options: VerifyOptions): SigningKey {
  const mapped = (options.keyMap ?? DEFAULT_KEY_MAP).get(token);
  const stand = mapped ? knownKey(mapped).key : undefined;
  const attribute = module.assemblyAttributes.find((a) => a.typeName === SIGNATURE_KEY_ATTRIBUTE);
  if (!attribute) {
    if (stand) return { key: stand, keyObject: knownKeyObject(stand), detail: identity.isEcmaKey ? 'ecma-key' : 'mapped-key' };
    if (identity.isEcmaKey) throw new KeyError('SG_ERR_KEY_ECMA', 'the assembly uses the ECMA neutral key and no platform key is mapped for it');
    return { key: identity, keyObject: knownKeyObject(identity), detail: undefined };
  }
  const args = module.decodeAttribute(attribute).fixedArguments;
  const [publicKeyHex, counterSignatureHex] = args.map((a) => a.value);
  if (args.length !== 2 || typeof publicKeyHex !== 'string' || typeof counterSignatureHex !== 'string') {
    throw new KeyError('SG_ERR_KEY_BAD_BLOB', `${SIGNATURE_KEY_ATTRIBUTE} must carry two strings (public key, counter-signature)`);
  }
  const signatureKey = knownKey(Buffer.from(publicKeyHex, 'hex')).key;
  const counterKey = stand ?? identity;
  if (counterKey.isEcmaKey)
    throw new KeyError(
      'SG_ERR_KEY_ECMA',
      `the counter-signature in ${SIGNATURE_KEY_ATTRIBUTE} is by the ECMA neutral key and no platform key is mapped for it`,
    );
  const counter = Buffer.from(counterSignatureHex, 'hex').reverse();
  const ok = createVerify(counterKey.hashAlgorithm).update(signatureKey.blob).verify(knownKeyObject(counterKey), counter);
  if (!ok)
    throw new KeyError(
      'SG_ERR_KEY_BAD_BLOB',
      `the counter-signature in ${SIGNATURE_KEY_ATTRIBUTE} does not verify with the ${stand ? (identity.isEcmaKey ? 'platform key that stands for the ECMA key' : 'key mapped for the identity key') : 'identity key'}`,
    );
  return { key: signatureKey, keyObject: knownKeyObject(signatureKey), detail: 'signature-key-attribute' };
}

const DESCRIPTIONS: Record<StrongNameState, string> = {
  unsigned: 'not strong-named',
  'delay-signed': 'delay-signed: public key present, signature slot reserved and empty',
  'public-signed': 'public-signed: STRONGNAMESIGNED flag set but the signature slot is empty',
  signed: 'signed: the strong-name signature verifies',
  'invalid-signature': 'the strong-name signature does not verify',
};

const DETAIL_TEXT: Record<StrongNameDetail, string> = {
  'flag-clear': 'the STRONGNAMESIGNED flag is clear (as Mono sn -R leaves it)',
  'key-without-slot': 'the assembly has a public key but no signature slot',
  'slot-without-key': 'the CLI header reserves a signature slot but the assembly has no public key',
  'flag-without-key': 'the STRONGNAMESIGNED flag is set but the assembly has no public key',
  'slot-size-mismatch': 'the signature slot size differs from the key size',
  'ecma-key': 'the ECMA neutral key, verified against the platform key',
  'mapped-key': 'verified with a substituted key for this token',
  'signature-key-attribute': 'signed with the key in AssemblySignatureKeyAttribute',
  'ready-to-run':
    'precompiled to native code (ReadyToRun, by crossgen), which keeps the signature slot of the IL it was made from: no strong-name signature covers such an image, and Microsoft does not re-sign its framework files; their Authenticode signature vouches for them',
  'not-verified': 'the signature was not verified',
};

/**
 * Classifies the strong-name state of a module by content (section 7.6). With `verify: false`
 * a non-empty slot is reported as `signed` with the detail `not-verified`.
 * @throws FormatError when the signature slot or public key blob is malformed
 */
export function classifyStrongName(module: ModuleMetadata, options: VerifyOptions & { verify?: boolean } = {}): StrongNameStatus {
  const cor = module.corHeader;
  const flagSet = (cor.flags & CorFlags.StrongNameSigned) !== 0;
  // The whole Assembly row is read (not its key alone): a row whose name is unreadable makes the file unreadable.
  const blob = module.assembly?.publicKey ?? new Uint8Array(0);
  const slot = getSignatureSlot(module.image, cor);
  const readyToRun = readReadyToRunHeader(module.image, cor) !== null;
  const details: StrongNameDetail[] = [];
  const result = (
    state: StrongNameState,
    extra: Partial<Pick<StrongNameStatus, 'publicKey' | 'publicKeyToken' | 'keyBits' | 'hashAlgorithm' | 'signatureValid' | 'failure'>> = {},
  ): StrongNameStatus => {
    if (readyToRun && (state === 'invalid-signature' || state === 'public-signed') && !details.includes('ready-to-run')) details.push('ready-to-run');
    return {
      state,
      details,
      description: [DESCRIPTIONS[state], ...details.map((d) => DETAIL_TEXT[d]), ...(extra.failure ? [extra.failure] : [])].join('; '),
      flagSet,
      slot,
      publicKey: extra.publicKey ?? null,
      publicKeyToken: extra.publicKeyToken ?? null,
      keyBits: extra.keyBits ?? null,
      hashAlgorithm: extra.hashAlgorithm ?? null,
      signatureValid: extra.signatureValid ?? null,
      failure: extra.failure ?? null,
    };
  };

  if (blob.length === 0) {
    if (slot) details.push('slot-without-key');
    if (flagSet) details.push('flag-without-key');
    return result('unsigned');
  }
  const { key: identity, token } = knownKey(blob);
  const base = { publicKey: identity, publicKeyToken: token, keyBits: identity.isEcmaKey ? null : identity.bitLength, hashAlgorithm: identity.hashAlgorithm };
  if (!slot) {
    details.push('key-without-slot');
    return result('invalid-signature', { ...base, signatureValid: false, failure: 'there is no signature to verify' });
  }
  const bytes = module.image.bytes;
  if (isAllZero(bytes, slot.fileOffset, slot.fileOffset + slot.size)) {
    if (!identity.isEcmaKey && slot.size !== identity.bitLength / 8) details.push('slot-size-mismatch');
    return result(flagSet ? 'public-signed' : 'delay-signed', base);
  }
  if (!flagSet) details.push('flag-clear');
  if (options.verify === false) {
    details.push('not-verified');
    return result('signed', base);
  }
  let signing: SigningKey;
  try {
    signing = resolveSignatureKey(module, identity, token, options);
  } catch (error) {
    if (error instanceof SignGateError && !(error instanceof FormatError)) {
      return result('invalid-signature', { ...base, signatureValid: false, failure: error.message });
    }
    throw error;
  }
  if (signing.detail) details.push(signing.detail);
  const keyBits = signing.key.bitLength;
  const info = { ...base, keyBits, hashAlgorithm: signing.key.hashAlgorithm };
  if (slot.size !== keyBits / 8) {
    details.push('slot-size-mismatch');
    return result('invalid-signature', {
      ...info,
      signatureValid: false,
      failure: `the slot holds ${slot.size} bytes but a ${keyBits}-bit key signs ${keyBits / 8}`,
    });
  }
  const verifier = createVerify(signing.key.hashAlgorithm);
  for (const chunk of signedContent(module.image, slot)) verifier.update(chunk);
  const signature = Buffer.from(bytes.subarray(slot.fileOffset, slot.fileOffset + slot.size)).reverse();
  const valid = verifier.verify(signing.keyObject, signature);
  return valid
    ? result('signed', { ...info, signatureValid: true })
    : result('invalid-signature', { ...info, signatureValid: false, failure: 'the RSA signature does not match the hash of the file' });
}

/**
 * Verifies the signature like `sn -vf`, optionally against an expected public key (whole blob).
 * Returns the status; `valid` is true only for a verified signature by the expected key.
 */
export function verifyStrongName(
  module: ModuleMetadata,
  options: VerifyOptions & { expectedKey?: PublicKeyInfo } = {},
): { valid: boolean; status: StrongNameStatus; reason: string | null } {
  const status = classifyStrongName(module, options);
  if (status.state !== 'signed') return { valid: false, status, reason: status.description };
  if (options.expectedKey && status.publicKey && !sameKeyBlob(status.publicKey, options.expectedKey)) {
    return {
      valid: false,
      status,
      reason: `signed with key token ${status.publicKeyToken}, not the expected key token ${publicKeyToken(options.expectedKey.blob)}`,
    };
  }
  return { valid: true, status, reason: null };
}

export interface SignOptions {
  /** Set COMIMAGE_FLAGS_STRONGNAMESIGNED before hashing (default true; Mono sn -R leaves it clear). */
  readonly setSignedFlag?: boolean;
  /** Recompute the PE checksum after writing the signature (default true; Mono sn -R leaves it). */
  readonly updateChecksum?: boolean;
  /** Signs the digest input; defaults to the module for a key in a PKCS#11 token, else node:crypto with the private key. */
  readonly signer?: (chunks: Iterable<Uint8Array>, algorithm: HashAlgorithm) => Uint8Array;
}

/**
 * Produces the fully signed bytes of a delay-signed (or re-signable) assembly. The input is not modified.
 * @throws KeyError SG_ERR_KEY_NOT_PAIR, SG_ERR_KEY_MISMATCH, SG_ERR_KEY_ECMA
 * @throws SignGateError SG_ERR_SN_NOT_STRONG_NAMED, SG_ERR_SN_BAD_SLOT and FormatError codes
 * @throws FormatError SG_ERR_SN_HEADERS_IN_SECTION when a section's raw data covers the PE headers
 */
export function signAssembly(module: ModuleMetadata, keyPair: StrongNameKeyFile, options: SignOptions = {}): Uint8Array {
  // A key in a PKCS#11 token signs through its module; a key pair file in process.
  const sign = options.signer ?? tokenSigner(keyPair);
  if (!keyPair.privateKey && !sign) {
    throw new KeyError('SG_ERR_KEY_NOT_PAIR', 'the key file holds only a public key; signing needs the key pair (.snk from sn -k)');
  }
  const assembly = module.assembly;
  if (!assembly || assembly.publicKey.length === 0) {
    throw new SignGateError('SG_ERR_SN_NOT_STRONG_NAMED', 'the assembly has no public key; build it delay-signed with the public key first', {
      fault: 'input',
    });
  }
  const identity = parsePublicKeyBlob(assembly.publicKey, 'input');
  if (identity.isEcmaKey) throw new KeyError('SG_ERR_KEY_ECMA', 'the assembly uses the ECMA neutral key; only Microsoft can sign it', { fault: 'input' });
  if (module.assemblyAttributes.some((a) => a.typeName === SIGNATURE_KEY_ATTRIBUTE)) {
    throw new KeyError('SG_ERR_KEY_MISMATCH', `the assembly carries ${SIGNATURE_KEY_ATTRIBUTE}; signing with a migrated signature key is not supported`, {
      fault: 'input',
    });
  }
  if (!sameRsaKey(identity, keyPair.publicKey)) {
    throw new KeyError(
      'SG_ERR_KEY_MISMATCH',
      `the key pair (token ${publicKeyToken(keyPair.publicKey.blob)}) does not match the assembly's public key (token ${publicKeyToken(identity.blob)})`,
    );
  }
  // Before any work: the checksum written after signing must lie outside the signed bytes.
  assertHeadersOutsideSections(module.image);
  const slot = getSignatureSlot(module.image, module.corHeader);
  if (!slot)
    throw new SignGateError('SG_ERR_SN_BAD_SLOT', 'the CLI header reserves no strong-name signature slot; build the assembly delay-signed', { fault: 'input' });
  if (slot.size !== identity.bitLength / 8) {
    throw new SignGateError(
      'SG_ERR_SN_BAD_SLOT',
      `the signature slot is ${slot.size} bytes but a ${identity.bitLength}-bit key needs ${identity.bitLength / 8}`,
      { fault: 'input' },
    );
  }
  const out = Uint8Array.from(module.image.bytes);
  const view = new DataView(out.buffer);
  const flagsAt = module.corHeader.flagsFileOffset;
  if (options.setSignedFlag !== false) view.setUint32(flagsAt, (module.corHeader.flags | CorFlags.StrongNameSigned) >>> 0, true);
  out.fill(0, slot.fileOffset, slot.fileOffset + slot.size);
  const image = parsePeImage(out);
  const chunks = signedContent(image, slot);
  let signature: Uint8Array;
  if (sign) signature = sign(chunks, identity.hashAlgorithm);
  else {
    const signer = createSign(identity.hashAlgorithm);
    for (const chunk of chunks) signer.update(chunk);
    signature = signer.sign(keyPair.privateKey!);
  }
  if (signature.length !== slot.size) {
    throw new SignGateError('SG_ERR_SN_CRYPTO', `the signer returned ${signature.length} bytes for a ${slot.size}-byte slot`);
  }
  out.set(Uint8Array.from(signature).reverse(), slot.fileOffset);
  if (options.updateChecksum !== false) view.setUint32(image.checkSumFileOffset, computePeChecksum(out, image.checkSumFileOffset), true);
  return out;
}

export interface SignatureOnlyDiff {
  /** True when the files differ in nothing but signature slot, the STRONGNAMESIGNED bit and the PE checksum. */
  readonly onlySignatureDiffers: boolean;
  readonly identical: boolean;
  /** The first other difference, when there is one. */
  readonly firstDifference: { readonly fileOffset: number; readonly before: number | null; readonly after: number | null; readonly where: string } | null;
}

/**
 * Compares an assembly with its signed counterpart byte by byte (like `sn -D`, but on bytes).
 * @throws FormatError when `before` is not a managed image with a signature slot
 */
export function compareIgnoringSignature(before: ModuleMetadata, after: Uint8Array): SignatureOnlyDiff {
  const a = before.image.bytes;
  const where = (i: number): string => describeOffset(before, i);
  const slot = getSignatureSlot(before.image, before.corHeader);
  const checksumAt = before.image.checkSumFileOffset;
  const flagsAt = before.corHeader.flagsFileOffset;
  const ignored = (i: number): boolean => (slot !== null && i >= slot.fileOffset && i < slot.fileOffset + slot.size) || (i >= checksumAt && i < checksumAt + 4);
  let identical = a.length === after.length;
  const common = Math.min(a.length, after.length);
  for (let i = 0; i < common; i++) {
    if (a[i] === after[i]) continue;
    identical = false;
    if (ignored(i)) continue;
    if (i === flagsAt && ((a[i]! ^ after[i]!) & ~CorFlags.StrongNameSigned) === 0) continue;
    return { onlySignatureDiffers: false, identical: false, firstDifference: { fileOffset: i, before: a[i]!, after: after[i]!, where: where(i) } };
  }
  if (a.length !== after.length) {
    return {
      onlySignatureDiffers: false,
      identical: false,
      firstDifference: {
        fileOffset: common,
        before: a[common] ?? null,
        after: after[common] ?? null,
        where: `file length (${a.length} vs ${after.length} bytes)`,
      },
    };
  }
  return { onlySignatureDiffers: true, identical, firstDifference: null };
}

/** Names the structure at a file offset, for messages. */
export function describeOffset(module: ModuleMetadata, fileOffset: number): string {
  const image = module.image;
  const cor = module.corHeader;
  if (fileOffset < image.peHeaderFileOffset) return `DOS header at ${hex(fileOffset)}`;
  if (fileOffset < image.sectionTableFileOffset) return `PE headers at ${hex(fileOffset)}`;
  if (fileOffset < image.sectionTableFileOffset + image.numberOfSections * 40) return `section table at ${hex(fileOffset)}`;
  if (fileOffset >= cor.fileOffset && fileOffset < cor.fileOffset + cor.cb) return `CLI header at ${hex(fileOffset)}`;
  const md = module.root;
  if (fileOffset >= md.fileOffset && fileOffset < md.fileOffset + md.size) return `metadata at ${hex(fileOffset)}`;
  for (const s of image.sections) {
    if (fileOffset >= s.pointerToRawData && fileOffset < s.pointerToRawData + s.sizeOfRawData) return `section ${s.name} at ${hex(fileOffset)}`;
  }
  return `unhashed bytes at ${hex(fileOffset)}`;
}
