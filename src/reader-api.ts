// `signgate/reader`: the reader and strong-name toolbox. Bytes in, never paths: PE images, .NET metadata,
// Authenticode signatures, strong-name key blobs and keys in PKCS#11 tokens, the strong-name state of an assembly,
// its verification and signature, and the writer that gives an assembly a strong name (what `signgate fix` does to
// one file). The commands themselves are the functions of `signgate`.
import { decodeText } from './core/text-encoding.js';
import { readFileSync } from 'node:fs';
import { readPkcs11PinFilesWith } from './strongname/pkcs11/pin.js';

// PE
export {
  parsePeImage,
  rvaToFileOffset,
  findSectionByRva,
  getDataDirectory,
  getCertificateTable,
  getOverlay,
  PeMagic,
  DataDirectoryIndex,
  type PeImage,
  type SectionHeader,
  type DataDirectory,
  type ByteRange,
} from './pe/pe-image.js';
export { parseCorHeader, hasCorHeader, readReadyToRunHeader, CorFlags, type CorHeader, type ReadyToRunHeader } from './pe/cor-header.js';
export { computePeChecksum } from './pe/checksum.js';

// Authenticode
export {
  readAuthenticode,
  parseTrustStore,
  type AuthenticodeInfo,
  type AuthenticodeState,
  type AuthenticodeSignatureInfo,
  type AuthenticodeTrust,
  type AuthenticodeOptions,
} from './authenticode/authenticode.js';
export { parseCertificateTable, WIN_CERT_TYPE_PKCS_SIGNED_DATA, type CertificateTable, type CertificateTableEntry } from './authenticode/certificate-table.js';
export { computeAuthenticodeImageHash } from './authenticode/image-hash.js';
export { DEFAULT_AUTHENTICODE_LIMITS, type AuthenticodeLimits } from './authenticode/limits.js';
export type { AuthenticodeCertificate, AuthenticodeTimestamp } from './authenticode/signed-data.js';
export { authenticodeOf, authenticodeVerdict, describeAuthenticodeVerdict, type AuthenticodeVerdict } from './authenticode/verdict.js';

// Metadata
export { parseMetadataRoot, type MetadataRoot, type StreamHeader } from './metadata/root.js';
export { MetadataTables } from './metadata/tables.js';
export { TableId, TableNames, CodedIndex } from './metadata/schema.js';
export {
  ModuleMetadata,
  formatVersion,
  AssemblyFlags,
  type AssemblyDefinition,
  type AssemblyReferenceRow,
  type AssemblyVersion,
  type CustomAttributeRow,
  type TypeOrigin,
  type FileRow,
  type ManifestResourceRow,
  type ExportedTypeRow,
  type ModuleMetadataOptions,
} from './metadata/module-metadata.js';
export { DEFAULT_READER_BUDGETS, type ReaderBudgets } from './metadata/budget.js';
export { parseMethodSignature, ElementType, type MethodSignature, type TypeSig } from './metadata/signatures.js';
export {
  decodeCustomAttributeValue,
  type SerStringDecoder,
  type AttributeArgument,
  type NamedAttributeArgument,
  type DecodedAttributeValue,
} from './metadata/custom-attribute-value.js';
export { targetFramework, describeTarget, type TargetFramework, type TargetKind } from './rules/load.js';

// Strong names: key blobs and key files, tokens, state, verification, signing
export {
  parsePublicKeyBlob,
  parseStrongNameKeyFile,
  createStrongNameKeyPair,
  strongNameKeyPairFromPrivateKey,
  rsaPublicKeyBlob,
  toPublicKeyObject,
  ECMA_KEY,
  MICROSOFT_PLATFORM_KEY,
  AlgId,
  type PublicKeyInfo,
  type StrongNameKeyFile,
  type HashAlgorithm,
} from './strongname/key-blob.js';
// Keys in a PKCS#11 token (pkcs11: URIs, RFC 7512): signAssembly(module, openPkcs11Key(uri)) signs through the module.
// A pin-source file is read from disk: this entry gives the process that reader (readPkcs11PinFilesWith).
readPkcs11PinFilesWith((path) => decodeText(readFileSync(path)).text);
export { parsePkcs11Uri, isPkcs11Uri, type Pkcs11Uri } from './strongname/pkcs11/uri.js';
export { isPkcs11Key, openPkcs11Key, pkcs11KeyWithPublicKey, probePkcs11Key, type Pkcs11KeyPair } from './strongname/pkcs11/signer.js';
export { publicKeyToken, referenceToken } from './strongname/key-token.js';
export {
  classifyStrongName,
  verifyStrongName,
  signAssembly,
  compareIgnoringSignature,
  StrongNameStates,
  DEFAULT_KEY_MAP,
  ECMA_KEY_TOKEN,
  type StrongNameState,
  type StrongNameDetail,
  type StrongNameStatus,
  type VerifyOptions,
  type SignOptions,
  type SignatureOnlyDiff,
} from './strongname/strong-name.js';
export {
  strongNameAssembly,
  identityPublicKey,
  type StrongNameAssemblyOptions,
  type StrongNameAssemblyResult,
  type StrongNameOutcome,
  type StrongNameNote,
  type StrongNameHash,
} from './strongname/strong-name-writer.js';
export {
  inspectAssembly,
  describeAttributes,
  type AssemblyInfo,
  type AttributeInfo,
  type ReferenceInfo,
  type InspectOptions,
} from './strongname/assembly-info.js';
export { readModule } from './strongname/well-formed.js';
/** The record `signgate verify` prints for one file's bytes, by the lean path (headers, Assembly row, hash, one RSA check). */
export { verifyAssemblyBytes } from './workflows/scan-file.js';
