// Gives an assembly a strong name after it was built (what `sn -R` cannot: the file has no public key yet),
// and points its references at assemblies strong-named alongside it. The changes are exactly these:
// - the Assembly row gets the public key and its PublicKey flag;
// - AssemblyRef rows of assemblies strong-named alongside get their public key token;
// - InternalsVisibleTo("Name") naming such an assembly gets ", PublicKey=<key>";
// - the metadata, rewritten with these changes, goes where the old metadata was, and what followed it in .text
//   (resources, debug data, imports, the entry stub, field data) moves behind it with a signature slot of the key's
//   size, every pointer to it rewritten (metadata/text-relayout.ts); when that is not understood, the metadata and the slot go
//   into a new section at the end of the image and the old metadata stays where it was, unreferenced;
// - the signature (or, delay-signed, an empty slot), the STRONGNAMESIGNED flag and the PE checksum.
// IL, the CLI header, Win32 resources and every table row but those above (and FieldRVA rows of field data that
// moved) keep their bytes and their addresses; what moved keeps its bytes.
import { checkWellFormed } from './well-formed.js';
import { KeyError, SignGateError } from '../core/errors.js';
import { encodeCompressedU32, MetadataEditor } from '../metadata/metadata-writer.js';
import { TableId } from '../metadata/schema.js';
import { computePeChecksum } from '../pe/checksum.js';
import { CorFlags, hasCorHeader, parseCorHeader } from '../pe/cor-header.js';
import { getCertificateTable, parsePeImage } from '../pe/pe-image.js';
import { appendSection } from '../pe/pe-writer.js';
import { ModuleMetadata, ModuleMetadata as Module } from '../metadata/module-metadata.js';
import { AlgId, sameRsaKey, parsePublicKeyBlob, type StrongNameKeyFile } from './key-blob.js';
import { canSign } from './pkcs11/signer.js';
import { assertHashableLayout, assertHeadersOutsideSections, getSignatureSlot } from './signed-content.js';
import { classifyStrongName, signAssembly, SIGNATURE_KEY_ATTRIBUTE, verifyStrongName, type StrongNameState } from './strong-name.js';
import { relayoutText, type Relayout } from '../metadata/text-relayout.js';
import { publicKeyToken } from './key-token.js';

/** The section that holds the rewritten metadata and the signature slot. */
export const STRONG_NAME_SECTION = '.sgmeta';

export const REFERENCE_ASSEMBLY_ATTRIBUTE = 'System.Runtime.CompilerServices.ReferenceAssemblyAttribute';
export const INTERNALS_VISIBLE_TO_ATTRIBUTE = 'System.Runtime.CompilerServices.InternalsVisibleToAttribute';

/** Hash algorithms a strong-name signature may use here. */
export type StrongNameHash = 'sha1' | 'sha256';

export interface StrongNameAssemblyOptions {
  /** The key. A key pair signs; with `delaySign` only its public key is used (a public key file is enough). */
  readonly key: StrongNameKeyFile;
  /** Write the public key and an empty signature slot for someone else to sign (the vendor's service). */
  readonly delaySign?: boolean;
  /** The signature's hash algorithm (default sha1, which every runtime verifies). It is part of the identity. */
  readonly hash?: StrongNameHash;
  /**
   * Assemblies strong-named alongside this one, by simple name (any case), with the public key blob each will
   * carry. AssemblyRefs to them get its token, InternalsVisibleTo naming them gets the key.
   */
  readonly identities?: ReadonlyMap<string, Uint8Array>;
  /** Re-sign an assembly that carries another publisher's key (its identity changes for every other consumer). */
  readonly force?: boolean;
  /**
   * The public key blob an assembly without a strong name gets instead of `key`'s: a satellite assembly takes its
   * main assembly's. The result is signed only when it is `key`'s own key pair; otherwise it is delay-signed.
   */
  readonly identityKey?: Uint8Array;
}

/** What became of one assembly. */
export type StrongNameOutcome =
  /** It had no strong name and now has one. */
  | 'strong-named'
  /** It kept its identity; its references (or friends) were updated and it was signed again or left delay-signed. */
  | 'references-updated'
  /** Another publisher's key was replaced with ours (`force`). */
  | 're-signed'
  /** It carried the key's public key without a valid signature (delay-signed) and is now signed. */
  | 'signed'
  /** Nothing needed to change: the bytes are the input's. */
  | 'unchanged';

/** Something the rewrite could not do and the user must know. */
export interface StrongNameNote {
  readonly kind: 'baml' | 'friend-without-key' | 'authenticode-removed' | 'overlay-kept' | 'satellite';
  readonly message: string;
}

export interface StrongNameAssemblyResult {
  readonly bytes: Uint8Array;
  readonly outcome: StrongNameOutcome;
  /** The state before, as classifyStrongName saw it. */
  readonly before: StrongNameState;
  /** Simple name and public key token of the result (null when it stays without a key). */
  readonly name: string;
  readonly publicKeyToken: string | null;
  /** One line per change, for reports. */
  readonly changes: readonly string[];
  readonly notes: readonly StrongNameNote[];
}

/** The public key blob an assembly strong-named with `key` and `hash` carries (the hash is part of the blob). */
export function identityPublicKey(key: StrongNameKeyFile, hash: StrongNameHash = 'sha1'): Uint8Array {
  const blob = Uint8Array.from(key.publicKey.blob);
  new DataView(blob.buffer).setUint32(4, hash === 'sha256' ? AlgId.Sha256 : AlgId.Sha1, true);
  return blob;
}

/**
 * Why an assembly cannot be given a strong name at all, or undefined when it can: not managed, a netmodule,
 * a reference assembly. Shared with callers that sort inputs before writing anything.
 */
export function unfixableReason(module: ModuleMetadata): { code: 'SG_ERR_FIX_NETMODULE' | 'SG_ERR_FIX_REFERENCE_ASSEMBLY'; message: string } | undefined {
  if (!module.hasManifest) {
    return {
      code: 'SG_ERR_FIX_NETMODULE',
      message: 'a netmodule (no Assembly row): it gets its strong name through the assembly that links it; fix that assembly instead',
    };
  }
  if (module.assemblyAttributes.some((a) => a.typeName === REFERENCE_ASSEMBLY_ATTRIBUTE)) {
    return {
      code: 'SG_ERR_FIX_REFERENCE_ASSEMBLY',
      message:
        'a reference assembly (ReferenceAssemblyAttribute): it has no code to run; fix the implementation assembly that ships next to it (lib/, not ref/)',
    };
  }
  return undefined;
}

/** The simple names an assembly's InternalsVisibleTo attributes name without a public key (the friends fix rewrites). */
export function friendNames(module: ModuleMetadata): string[] {
  const names: string[] = [];
  for (const attribute of module.assemblyAttributes) {
    if (attribute.typeName !== INTERNALS_VISIBLE_TO_ATTRIBUTE) continue;
    const friend = parseFriend(module.attributeValue(attribute));
    if (friend && !/,\s*PublicKey\s*=/i.test(friend.text)) names.push(friend.text.split(',')[0]!.trim());
  }
  return names;
}

/**
 * Strong-names `bytes` (or updates its references to assemblies strong-named alongside), verifying the
 * result before returning it. The input is not modified.
 * @throws SignGateError SG_ERR_FIX_* for an input that must not or cannot be changed, KeyError for the key,
 *   FormatError for an image that cannot be rewritten (headers that cannot grow by a section header, #- metadata)
 */
export function strongNameAssembly(bytes: Uint8Array, options: StrongNameAssemblyOptions): StrongNameAssemblyResult {
  const image = parsePeImage(bytes);
  if (!hasCorHeader(image)) {
    throw new SignGateError(
      'SG_ERR_FIX_NOT_MANAGED',
      'a native PE image with no CLI header, not a .NET assembly: a strong name exists only for .NET assemblies',
    );
  }
  const module = new Module(image);
  // The one verdict: fix rewrites only what every other command reads (well-formed.ts).
  checkWellFormed(module);
  const unfixable = unfixableReason(module);
  if (unfixable) throw new SignGateError(unfixable.code, unfixable.message);
  if (!options.delaySign && !canSign(options.key)) {
    throw new KeyError(
      'SG_ERR_KEY_NOT_PAIR',
      'the key file holds only a public key; a full signature needs the key pair (.snk from sn -k), or pass it as the delay-sign key',
    );
  }
  const hash = options.hash ?? 'sha1';
  const ours = identityPublicKey(options.key, hash);
  const status = classifyStrongName(module);
  const assembly = module.assembly!;
  const name = assembly.name;
  const existing = assembly.publicKey.length > 0 ? assembly.publicKey : undefined;
  const existingKey = existing ? parsePublicKeyBlob(existing) : undefined;
  const isOurs = existingKey !== undefined && !existingKey.isEcmaKey && sameRsaKey(existingKey, options.key.publicKey);
  if (module.assemblyAttributes.some((a) => a.typeName === SIGNATURE_KEY_ATTRIBUTE)) {
    throw new SignGateError(
      'SG_ERR_FIX_OTHER_PUBLISHER',
      `the assembly carries ${SIGNATURE_KEY_ATTRIBUTE} (enhanced strong naming by its publisher); signgate does not rewrite it`,
    );
  }

  const editor = new MetadataEditor(module);
  const changes: string[] = [];
  const notes: StrongNameNote[] = [];
  // Whose key the result carries: ours for an unsigned assembly (or a forced one), else the one it has.
  let identity = existing;
  let outcome: StrongNameOutcome = 'unchanged';
  if (!existing) {
    identity = options.identityKey ?? ours;
    outcome = 'strong-named';
  }

  const identities = lowerKeys(options.identities);
  // References: a reference to an assembly strong-named alongside gets its token; others are left alone.
  for (const ref of module.assemblyReferences) {
    const target = identities.get(ref.name.toLowerCase());
    if (!target) continue;
    const token = Buffer.from(publicKeyToken(target), 'hex');
    const current = ref.flags & 0x1 ? Buffer.from(publicKeyToken(ref.publicKeyOrToken), 'hex') : Buffer.from(ref.publicKeyOrToken);
    if (current.equals(token)) continue;
    editor.setCell(TableId.AssemblyRef, ref.rid, 'publicKeyOrToken', editor.addBlob(token));
    if (ref.flags & 0x1) editor.setCell(TableId.AssemblyRef, ref.rid, 'flags', ref.flags & ~0x1);
    changes.push(`reference ${ref.name} ${current.length ? `token ${current.toString('hex')} ->` : 'gets token'} ${token.toString('hex')}`);
  }
  // Friends: InternalsVisibleTo("Name") of a strong-named assembly must name the friend's public key.
  for (const attribute of module.assemblyAttributes) {
    if (attribute.typeName !== INTERNALS_VISIBLE_TO_ATTRIBUTE) continue;
    const value = module.attributeValue(attribute);
    const friend = parseFriend(value);
    if (!friend || /,\s*PublicKey\s*=/i.test(friend.text)) continue;
    const simple = friend.text.split(',')[0]!.trim();
    const key = identities.get(simple.toLowerCase());
    if (!key) {
      notes.push({
        kind: 'friend-without-key',
        message: `InternalsVisibleTo("${friend.text}") names an assembly that is not strong-named here; a strong-named assembly grants friend access only to a friend named with its public key, so ${simple} loses access to internals`,
      });
      continue;
    }
    const text = `${simple}, PublicKey=${Buffer.from(key).toString('hex')}`;
    editor.setCell(TableId.CustomAttribute, attribute.rid, 'value', editor.addBlob(friend.rewrite(text)));
    changes.push(`InternalsVisibleTo("${simple}") gets the public key of token ${publicKeyToken(key)}`);
  }
  for (const resource of module.manifestResources) {
    if (/\.g\.resources$/i.test(resource.name)) {
      notes.push({
        kind: 'baml',
        message: `resource ${resource.name} holds compiled XAML (BAML), whose type references name assemblies without a public key token; they are not rewritten. WPF resolves them by simple name from this folder, but a XAML reference that names a strong-named assembly by full name must be rebuilt`,
      });
    }
  }
  const referencesChanged = !editor.unchanged;
  const signedByOther = existing !== undefined && !isOurs && (status.state === 'signed' || status.state === 'invalid-signature');
  if (signedByOther && referencesChanged && !options.force) {
    throw new SignGateError(
      'SG_ERR_FIX_OTHER_PUBLISHER',
      `signed by another publisher (key token ${publicKeyToken(existing!)}) and references ${changes.length === 1 ? 'an assembly' : 'assemblies'} strong-named here (${changes.join('; ')}); updating them means re-signing it with your key, which changes its identity for every other consumer. Rebuild it against the strong-named references, or pass --force to re-sign it`,
    );
  }
  if (signedByOther && options.force && (referencesChanged || status.state === 'invalid-signature')) {
    identity = ours;
    outcome = 're-signed';
  } else if (existing && referencesChanged) {
    outcome = 'references-updated';
  } else if (isOurs && !options.delaySign && status.state !== 'signed') {
    outcome = 'signed';
  }
  if (outcome === 'unchanged') {
    // A file left as it is loses nothing now: a friend named without a key lost its access when the file got its
    // strong name (the run that did it said so), so that note is not said again on every later run.
    const kept = notes.filter((n) => n.kind !== 'friend-without-key');
    return { bytes, outcome, before: status.state, name, publicKeyToken: existing ? publicKeyToken(existing) : null, changes, notes: kept };
  }

  // From here the file changes.
  assertHashableLayout(image);
  assertHeadersOutsideSections(image);
  let base = image;
  if (getCertificateTable(image)) {
    // Any change breaks an Authenticode signature; a strong name is what the file is being changed for.
    base = parsePeImage(withoutCertificateTable(bytes, image));
    notes.push({
      kind: 'authenticode-removed',
      message:
        "its Authenticode signature was removed: any change to the file breaks it, and .NET does not check it when loading a library. The publisher's signed original stays where it came from; sign the fixed file with Authenticode again if your installer needs that",
    });
  }
  const key = parsePublicKeyBlob(identity!);
  if (identity !== existing) {
    editor.setCell(TableId.Assembly, 1, 'publicKey', editor.addBlob(identity!));
    editor.setCell(TableId.Assembly, 1, 'flags', assembly.flags | 0x1);
    changes.unshift(
      `public key token ${publicKeyToken(identity!)} (${key.bitLength}-bit, ${key.hashAlgorithm})${existing ? ` replaces ${publicKeyToken(existing)}` : ''}`,
    );
  }
  const slotSize = key.bitLength / 8;
  const keepSlot = getSignatureSlot(base, module.corHeader)?.size === slotSize;
  let out: Uint8Array;
  let relaid: Relayout | undefined;
  if (editor.unchanged && keepSlot) {
    // Only the signature changes (a delay-signed assembly of this key pair): nothing moves.
    out = Uint8Array.from(base.bytes);
  } else if ((relaid = relayoutText(base, module, editor, keepSlot ? 0 : slotSize))) {
    // The metadata where it was, the tail of .text behind it (see metadata/text-relayout.ts).
    out = relaid.bytes;
  } else {
    const metadata = editor.build().bytes;
    const section = new Uint8Array(metadata.length + (keepSlot ? 0 : slotSize));
    section.set(metadata);
    const added = appendSection(base, STRONG_NAME_SECTION, section);
    out = added.bytes;
    if (added.overlay) {
      notes.push({
        kind: 'overlay-kept',
        message: `${added.overlay.size} byte${added.overlay.size === 1 ? '' : 's'} after the last section (overlay data, which no strong name covers) were kept as they were, after the new ${STRONG_NAME_SECTION} section`,
      });
    }
    // The headers may have grown, moving every section's raw data: offsets are read from the new image.
    const header = new DataView(out.buffer);
    const cor = parseCorHeader(parsePeImage(out)).fileOffset;
    header.setUint32(cor + 8, added.rva, true); // MetaData RVA
    header.setUint32(cor + 12, metadata.length, true); // MetaData size
    if (!keepSlot) {
      header.setUint32(cor + 32, added.rva + metadata.length, true); // StrongNameSignature RVA
      header.setUint32(cor + 36, slotSize, true);
    }
  }
  const outImage = parsePeImage(out);
  const outCor = parseCorHeader(outImage);
  const slot = getSignatureSlot(outImage, outCor)!;
  out.fill(0, slot.fileOffset, slot.fileOffset + slot.size);
  const view = new DataView(out.buffer);
  // Signed here only with the key pair of the identity the result carries; else it stays (or becomes) delay-signed.
  // A public-signed assembly of another publisher keeps its flag: the runtime that accepts it checks no signature.
  const sign = !options.delaySign && sameRsaKey(key, options.key.publicKey);
  const keepFlag = !sign && identity === existing && status.state === 'public-signed';
  view.setUint32(outCor.flagsFileOffset, (keepFlag ? outCor.flags : outCor.flags & ~CorFlags.StrongNameSigned) >>> 0, true);
  let result: Uint8Array;
  if (!sign) {
    view.setUint32(outImage.checkSumFileOffset, computePeChecksum(out, outImage.checkSumFileOffset), true);
    result = out;
    const state = classifyStrongName(new Module(parsePeImage(result))).state;
    const expected = keepFlag ? 'public-signed' : 'delay-signed';
    if (state !== expected) throw new SignGateError('SG_ERR_INTERNAL', `the ${expected} output reads as ${state}; nothing was written`);
  } else {
    result = signAssembly(new Module(parsePeImage(out)), options.key);
    const check = verifyStrongName(new Module(parsePeImage(result)));
    if (!check.valid) throw new SignGateError('SG_ERR_INTERNAL', `the strong-named output did not verify (${check.reason}); nothing was written`);
  }
  return { bytes: result, outcome, before: status.state, name, publicKeyToken: publicKeyToken(identity!), changes, notes };
}

function lowerKeys(map: ReadonlyMap<string, Uint8Array> | undefined): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const [k, v] of map ?? []) out.set(k.toLowerCase(), v);
  return out;
}

/** The image without its certificate table: the directory entry cleared and the bytes cut off. */
function withoutCertificateTable(bytes: Uint8Array, image: ReturnType<typeof parsePeImage>): Uint8Array {
  const table = getCertificateTable(image)!;
  const out = Uint8Array.from(bytes.subarray(0, table.fileOffset));
  const entry = image.dataDirectories[4]!.entryFileOffset;
  out.fill(0, entry, entry + 8);
  return out;
}

/** The string argument of an InternalsVisibleTo value blob, and a way to write the blob with another string. */
function parseFriend(value: Uint8Array): { text: string; rewrite: (text: string) => Uint8Array } | undefined {
  if (value.length < 3 || value[0] !== 1 || value[1] !== 0 || value[2] === 0xff) return undefined;
  let length: number;
  let at: number;
  const b0 = value[2]!;
  if ((b0 & 0x80) === 0) [length, at] = [b0, 3];
  else if ((b0 & 0xc0) === 0x80 && value.length >= 4) [length, at] = [((b0 & 0x3f) << 8) | value[3]!, 4];
  else if ((b0 & 0xe0) === 0xc0 && value.length >= 6) [length, at] = [((b0 & 0x1f) << 24) | (value[3]! << 16) | (value[4]! << 8) | value[5]!, 6];
  else return undefined;
  if (at + length > value.length) return undefined;
  const text = Buffer.from(value.subarray(at, at + length)).toString('utf8');
  const tail = value.subarray(at + length);
  return {
    text,
    rewrite: (next) => {
      const utf8 = Buffer.from(next, 'utf8');
      const prefix = encodeCompressedU32(utf8.length);
      return Uint8Array.from([1, 0, ...prefix, ...utf8, ...tail]);
    },
  };
}
