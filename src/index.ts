// The public library API of signgate. Library functions take bytes and options, never paths.
import { readFileSync } from 'node:fs';
import { readPkcs11PinFilesWith } from './strongname/pkcs11/pin.js';

// Errors
export { ErrorCodes, type ErrorCode } from './core/error-codes.js';
export { SignGateError, FormatError, KeyError, UsageError, isSignGateError, type FormatErrorDetails } from './core/errors.js';

// Binary
export { ByteCursor } from './binary/byte-cursor.js';

// PE
export {
  parsePeImage,
  rvaToFileOffset,
  findSectionByRva,
  getDataDirectory,
  getCertificateTable,
  getOverlay,
  findOverlappingSections,
  PeMagic,
  DataDirectoryIndex,
  type PeImage,
  type SectionHeader,
  type DataDirectory,
  type ByteRange,
} from './pe/pe-image.js';
export { parseCorHeader, hasCorHeader, readReadyToRunHeader, CorFlags, type CorHeader, type ReadyToRunHeader } from './pe/cor-header.js';
export { computePeChecksum } from './pe/checksum.js';
export { appendSection, READ_ONLY_DATA, type AddedSection } from './pe/pe-writer.js';

// Authenticode
export { readAuthenticode, parseTrustStore, type AuthenticodeInfo, type AuthenticodeState, type AuthenticodeSignatureInfo, type AuthenticodeTrust, type AuthenticodeOptions } from './authenticode/authenticode.js';
export { parseCertificateTable, WIN_CERT_TYPE_PKCS_SIGNED_DATA, type CertificateTable, type CertificateTableEntry } from './authenticode/certificate-table.js';
export { computeAuthenticodeImageHash, imageHashRanges } from './authenticode/image-hash.js';
export { DEFAULT_AUTHENTICODE_LIMITS, type AuthenticodeLimits } from './authenticode/limits.js';
export type { AuthenticodeCertificate, AuthenticodeTimestamp } from './authenticode/signed-data.js';
export { authenticodeOf, authenticodeVerdict, describeAuthenticodeVerdict, type AuthenticodeVerdict } from './authenticode/verdict.js';
export { loadTrustStore } from './workflows/authenticode.js';

// Metadata
export { parseMetadataRoot, type MetadataRoot, type StreamHeader } from './metadata/root.js';
export { MetadataTables, MAX_ROW_COUNT } from './metadata/tables.js';
export { MetadataEditor, encodeCompressedU32, type MetadataRewrite } from './metadata/metadata-writer.js';
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
export { DEFAULT_READER_BUDGETS, ReaderMeter, type ReaderBudgets, type ReaderWork } from './metadata/budget.js';
export { parseMethodSignature, ElementType, type MethodSignature, type TypeSig } from './metadata/signatures.js';
export { decodeCustomAttributeValue, type SerStringDecoder, type AttributeArgument, type NamedAttributeArgument, type DecodedAttributeValue } from './metadata/custom-attribute-value.js';

// Strong names
export {
  parsePublicKeyBlob,
  parseStrongNameKeyFile,
  createStrongNameKeyPair,
  strongNameKeyPairFromPrivateKey,
  rsaPublicKeyBlob,
  toPublicKeyObject,
  sameRsaKey,
  ECMA_KEY,
  MICROSOFT_PLATFORM_KEY,
  AlgId,
  type PublicKeyInfo,
  type StrongNameKeyFile,
  type HashAlgorithm,
} from './strongname/key-blob.js';
// Keys in a PKCS#11 token (pkcs11: URIs, RFC 7512): signAssembly(module, openPkcs11Key(uri)) signs through the module.
// A pin-source file is read from disk: the library's entry gives the process that reader (readPkcs11PinFilesWith).
readPkcs11PinFilesWith((path) => readFileSync(path, 'utf8'));
export { parsePkcs11Uri, isPkcs11Uri, PKCS11_PIN_ENV, PKCS11_MODULE_ENV, type Pkcs11Uri } from './strongname/pkcs11/uri.js';
export { readPkcs11Pin, readPkcs11PinFilesWith, type PinFileReader } from './strongname/pkcs11/pin.js';
export { isPkcs11Key, openPkcs11Key, pkcs11KeyWithPublicKey, signWithPkcs11, tokenSigner, canSign, probePkcs11Key, type Pkcs11KeyPair } from './strongname/pkcs11/signer.js';
export { publicKeyToken, referenceToken } from './strongname/token.js';
export { getSignatureSlot, signedContent, signedContentLength, assertHashableLayout, assertHeadersOutsideSections, type SignatureSlot } from './strongname/signed-content.js';
export {
  classifyStrongName,
  verifyStrongName,
  signAssembly,
  compareIgnoringSignature,
  computeStrongNameHash,
  describeOffset,
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
  unfixableReason,
  STRONG_NAME_SECTION,
  type StrongNameAssemblyOptions,
  type StrongNameAssemblyResult,
  type StrongNameOutcome,
  type StrongNameNote,
  type StrongNameHash,
} from './strongname/strong-name-writer.js';
export { inspectAssembly, readModule, describeAttributes, type AssemblyInfo, type AttributeInfo, type ReferenceInfo, type InspectOptions } from './strongname/assembly-info.js';

// Workflows: what the commands do, as functions (options in, typed result out).
export { check, prepareCheck, keepHeapSmall, DEFAULT_MAX_UPLOAD_BYTES, DEFAULT_READ_AT_ONCE_BYTES, type CheckOptions, type CheckRun, type PreparedCheck } from './workflows/check.js';
export { fix, planFix, type FixOptions, type FixResult, type FixFileResult, type FixFileOutcome } from './workflows/fix.js';
export { sign, checkReturnedFile, fileVerdict, type SignOptions as SignWorkflowOptions, type SignEvents, type SignResult, type SignedFileResult, type ProgressReporter } from './workflows/sign.js';
export { audit, renderAudit, renderAuditPieces, verifyAuditReport, parseManifest, jobsFromLedger, readSignatureRecord, AuditFormats, type AuditOptions, type AuditFormat, type VerifyReportResult } from './workflows/audit.js';
export { downloadJob, planPrune, parseDuration, type PrunePlan } from './workflows/jobs.js';
export { readRecordPublicKey } from './workflows/keys.js';
export { connect, resolveAccessToken, type ServiceOptions, type AccessTokenOptions } from './workflows/service.js';
/** The licenses as the online check uses them (each option's key token, where the service reports it), and an option's public key file. */
export { onlineLicenses, savePublicKey, type OnlineLicenses, type SavedPublicKey } from './workflows/licenses.js';
export { extractPackage, type ExtractOptions, type ExtractResult, type ExtractedFile } from './workflows/extract.js';
export { loadConfig, findConfigFile, CONFIG_FILE_NAME, type CheckConfig } from './workflows/config.js';
export { Ledger, cacheDir, ledgerPath, type LedgerEntry } from './workflows/ledger.js';
export { scanFiles, scanFilesAsJson, scanJson, scanThreads, idleCores, idleCoresNow, inspectFile, verifyFile, SCAN_POOL_THRESHOLD, type ScanJson, type ScanOptions, type ScanInput, type ScanKind, type ScanRecord, type ScanSettings, type VerifyRecord } from './workflows/scan.js';
export { verifyAssemblyBytes } from './workflows/scan-file.js';
export { windowsPathKey, windowsNameProblem } from './core/windows-names.js';
export {
  ChainChecker,
  chainEvents,
  entryHash,
  entryLine,
  verifyChain,
  verifyRecordText,
  EMPTY_HEAD,
  GENESIS_HASH,
  type SignatureEvent,
  type SignatureEntry,
  type ChainHead,
  type RecordBreak,
  type RecordVerification,
} from './record/signature-record.js';
export { leafHash, nodeHash, rootHash, inclusionProof, consistencyProof, verifyInclusion, verifyConsistency, type Hash } from './record/merkle.js';
export {
  entryLeaf,
  signCheckpoint,
  parseCheckpoint,
  formatVerifierKey,
  parseVerifierKey,
  noteKeyId,
  recordPublicKey,
  type Checkpoint,
  type TreeHead,
  type RecordVerifier,
} from './record/checkpoint.js';
export { continuationProblem } from './record/record-continuation.js';

// Rules and reports
export { runCheck, checkExitCode, type CheckResult, type FileResult } from './rules/runner.js';
export { runCheckPooled, buildAuditPooled, runCheckInRounds, buildAuditInRounds } from './workflows/pipeline/rounds.js';
export { checkThreads, CHECK_POOL_THRESHOLD, type PoolOptions } from './workflows/pipeline/index.js';
export { rules, ruleDocsUrl } from './rules/index.js';
export type { CheckInput, CheckSettings, ExpectedKey, LicensedKeyToken } from './rules/types.js';
export { buildAudit } from './audit/build.js';
export type { AuditReport, AuditFile, AuditLoad, AuditLoadSummary, AuditSignature, AuditRecordSource } from './audit/model.js';
/** Will it load: under the runtime license, the developer license, and on .NET Framework (TargetFrameworkAttribute). */
export { loadVerdict, loadsUnder, targetFramework, describeTarget, type LoadVerdict, type LoadAnswer, type TargetFramework, type TargetKind } from './rules/load.js';
/** The archive path: pack a build output after the pre-flight check; sign a project archive through POST /archives. */
export { pack, signArchive, type PackOptions, type PackResult, type SignArchiveOptions, type SignArchiveResult, type ArchiveFileResult } from './workflows/archive.js';
export { formatReport, ReportFormats, type ReportFormat } from './report/index.js';

// The signing service client
export {
  createServiceClient,
  FAILED_STATES,
  type ServiceClient,
  type ClientOptions,
  type JobRef,
  type CreatedJob,
  type JobStatus,
  type JobSummary,
  type UploadFile,
  type DownloadSink,
  type DownloadPart,
} from './service-client/client.js';
// Where a download goes: a file written through a part beside it, renamed when complete.
export { downloadTo } from './workflows/files.js';
export type { LicenseEntry } from './service-client/licenses.js';
