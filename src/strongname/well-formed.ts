// The one well-formedness verdict: every structural check a full read of a file makes, in one place, once per file.
// `inspect`, `check` (SG001), `audit`, `verify`, `fix`, `sign` and the service's worker all take their "can this file
// be read" from here, so that no command passes a file another refuses. What it refuses is a file's own fault (a
// FormatError, or a KeyError whose fault is `input`): a finding on that file, never a stopped run.
import { FormatError, hex, isInputFault, SignGateError } from '../core/errors.js';
import { parseCertificateTable } from '../authenticode/certificate-table.js';
import { DEFAULT_AUTHENTICODE_LIMITS, type AuthenticodeLimits } from '../authenticode/limits.js';
import { ModuleMetadata, type ModuleMetadataOptions } from '../metadata/module-metadata.js';
import { hasCorHeader } from '../pe/cor-header.js';
import { parsePeImage, type PeImage } from '../pe/pe-image.js';
import { knownKey } from './known-keys.js';
import { SIGNATURE_KEY_ATTRIBUTE } from './strong-name.js';
import { assertHashableLayout, assertHeadersOutsideSections, getSignatureSlot } from './signed-content.js';

/** What the verdict reads with: the reader's budgets and the Authenticode limits (defaults when unset). */
export interface WellFormedOptions extends ModuleMetadataOptions {
  readonly authenticodeLimits?: Partial<AuthenticodeLimits>;
}

/** A file that passed the verdict: a native image, or a managed module every read of which succeeds. */
export type WellFormedFile =
  | { readonly native: true; readonly image: PeImage }
  | { readonly native: false; readonly image: PeImage; readonly module: ModuleMetadata };

/**
 * The checks on a parsed module, in the order a reader meets the structures:
 * - every index of the type-system tables (heaps, simple and coded indexes, member lists: ModuleMetadata.checkIndexes);
 * - nesting and resolution-scope chains end, and each custom attribute's constructor is a method of a type
 *   (ModuleMetadata.checkStructure);
 * - what `inspect` shows: the module row, the assembly row and its public key blob (a CAPI RSA key or the ECMA key),
 *   every assembly reference, the type of every assembly and module attribute (a constructor signature or a value
 *   that cannot be read is that attribute's error, as `inspect` shows it, and the finding of the rule that reads
 *   it: SG303 for the vendor attribute), and the value of SignatureKeyAttribute, which a verifier reads;
 * - the strong-name structures: a signature slot inside one section, and, where there is one, a layout whose signed
 *   bytes every strong-name tool agrees on (standard headers, no section over them, no two sections sharing bytes);
 * - the Authenticode certificate table's WIN_CERTIFICATE entries (their PKCS#7 content is the Authenticode
 *   verdict's: a signature that does not verify is a state, not a malformed file).
 * @throws FormatError (SG_ERR_PE_*, SG_ERR_CLI_*, SG_ERR_MD_*, SG_ERR_KEY_BAD_BLOB, SG_ERR_SN_*, SG_ERR_AC_*): the file's fault
 */
export function checkWellFormed(module: ModuleMetadata, options: WellFormedOptions = {}): void {
  module.checkIndexes();
  module.checkStructure();
  void module.moduleName;
  void module.mvid;
  const assembly = module.assembly;
  if (assembly?.publicKey.length) assemblyKey(module, assembly.publicKey);
  for (const reference of module.assemblyReferences) void reference.name;
  const dot = SIGNATURE_KEY_ATTRIBUTE.lastIndexOf('.');
  for (const row of module.assemblyAttributesOfType(SIGNATURE_KEY_ATTRIBUTE.slice(0, dot), SIGNATURE_KEY_ATTRIBUTE.slice(dot + 1))) module.decodeAttribute(row);
  const slot = getSignatureSlot(module.image, module.corHeader);
  if (slot && assembly?.publicKey.length) {
    assertHashableLayout(module.image);
    assertHeadersOutsideSections(module.image);
  }
  parseCertificateTable(module.image, authenticodeLimits(options));
}

/**
 * Reads a file's bytes to the verdict: its PE image, and for a managed file its metadata, checked whole.
 * @throws FormatError and input-fault SignGateErrors as checkWellFormed; the file's fault, every one
 */
export function readWellFormed(bytes: Uint8Array, options: WellFormedOptions = {}): WellFormedFile {
  const image = parsePeImage(bytes);
  if (!hasCorHeader(image)) {
    parseCertificateTable(image, authenticodeLimits(options));
    return { native: true, image };
  }
  const module = new ModuleMetadata(image, options.budgets === undefined ? {} : { budgets: options.budgets });
  checkWellFormed(module, options);
  return { native: false, image, module };
}

/**
 * A managed file's metadata after the verdict, for callers that need the metadata (sign, the returned file's
 * verdict, the service's signer, verify, fix).
 * @throws SignGateError SG_ERR_CLI_BAD_HEADER (input) for a native image; what readWellFormed throws
 */
export function readModule(bytes: Uint8Array, options: WellFormedOptions = {}): ModuleMetadata {
  const file = readWellFormed(bytes, options);
  if (file.native) {
    throw new SignGateError('SG_ERR_CLI_BAD_HEADER', 'the file is a native PE image with no CLI header, not a .NET assembly', { fault: 'input' });
  }
  return file.module;
}

/** The assembly's public key blob parsed; a bad one is the file's fault, said as the assembly's (not the user's --key). */
function assemblyKey(module: ModuleMetadata, blob: Uint8Array): void {
  try {
    knownKey(blob);
  } catch (error) {
    if (!isInputFault(error)) throw error;
    const at = module.assemblyPublicKeyLocation?.fileOffset ?? -1;
    throw new FormatError(
      'SG_ERR_KEY_BAD_BLOB',
      `the assembly's own public key (the Assembly row's PublicKey blob${at >= 0 ? ` at ${hex(at)}` : ''}) is not a valid key blob: ${error.message}`,
      { structure: 'Assembly public key blob', fileOffset: at },
      { cause: error },
    );
  }
}

/** The limits the certificate table's entries are read with (their content is the Authenticode verdict's). */
function authenticodeLimits(options: WellFormedOptions): AuthenticodeLimits {
  return options.authenticodeLimits ? { ...DEFAULT_AUTHENTICODE_LIMITS, ...options.authenticodeLimits } : DEFAULT_AUTHENTICODE_LIMITS;
}
