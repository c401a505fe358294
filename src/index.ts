// The public library API of signgate, the entry `signgate`: what the commands do, as functions with typed options
// and results (check, sign, audit, fix, jobs, licenses, the archive path, inspect and verify), the signing service
// client, the reports, and the errors they throw. Library functions take options in and give a typed result out.
//
// The rest has entries of its own (package.json "exports"; docs/api.md says what each is for):
//   signgate/reader  the reader and strong-name toolbox, bytes in: PE, metadata, Authenticode, key blobs, strong names
//   signgate/record  the signature record's format: its entries and chain, the Merkle tree, signed checkpoints
//   signgate/server  the reference signing service (loads fastify; this entry never does)
// What is in none of them (the pools, thresholds, heap settings of a process, the pipeline's steps) is no API.
// test/package/public-api.test.ts compares the names of each entry with test/package/public-api.json.

// Errors
export { ErrorCodes, type ErrorCode } from './core/error-codes.js';
export { SignGateError, FormatError, KeyError, UsageError, ServiceError, isSignGateError, type FormatErrorDetails } from './core/errors.js';

// check
export { check, type CheckOptions, type CheckRun } from './workflows/check.js';
export { checkExitCode, type CheckResult, type FileResult } from './rules/rule-runner.js';
export type { CheckSettings, ExpectedKey, LicensedKeyToken } from './rules/types.js';
export { rules, ruleDocsUrl } from './rules/index.js';
export { formatReport, ReportFormats, type ReportFormat } from './report/index.js';
export { loadConfig, findConfigFile, type CheckConfig } from './workflows/config.js';

// fix
export { fix, type FixOptions, type FixResult, type FixFileResult, type FixFileOutcome } from './workflows/fix.js';

// sign, jobs, licenses, and the service client under them
export {
  sign,
  type SignOptions as SignWorkflowOptions,
  type SignEvents,
  type SignResult,
  type SignedFileResult,
  type ProgressReporter,
} from './workflows/sign.js';
export { downloadJob, planPrune, type DownloadedFile, type DownloadJobOptions, type DownloadJobResult, type PrunePlan } from './workflows/jobs.js';
export { connect, type ServiceOptions } from './workflows/service.js';
/** The licenses as the online check uses them (each option's key token, where the service reports it), and an option's public key file. */
export { onlineLicenses, savePublicKey, type OnlineLicenses, type SavedPublicKey } from './workflows/licenses.js';
export { extractPackage, type ExtractOptions, type ExtractResult, type ExtractedFile } from './workflows/extract.js';
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
/** Where client.download puts a package: a file written through a part beside it, renamed when complete. */
export { downloadTo } from './workflows/files.js';
export type { LicenseEntry } from './service-client/answers.js';
/** The archive path: pack a build output after the pre-flight check; sign a project archive through POST /archives. */
export {
  pack,
  signArchive,
  type PackOptions,
  type PackResult,
  type SignArchiveOptions,
  type SignArchiveResult,
  type ArchiveFileResult,
} from './workflows/archive.js';

// audit
export {
  audit,
  renderAudit,
  renderAuditPieces,
  verifyAuditReport,
  readSignatureRecord,
  AuditFormats,
  auditWithSbom,
  renderSbom,
  SbomSpecVersions,
  type AuditOptions,
  type AuditFormat,
  type AuditSbomOptions,
  type AuditWithSbom,
  type SbomOptions,
  type SbomSpecVersion,
  type VerifyReportResult,
} from './workflows/audit.js';
export type { AuditReport, AuditFile, AuditLoad, AuditLoadSummary, AuditSignature, AuditRecordSource } from './audit/model.js';
export type { ReleaseInventory, InventoryFile, InventoryPackage, InventoryKind, OtherFileEvidence } from './audit/sbom-inventory.js';
/** Will it load: under the runtime license, the developer license, and on .NET Framework (every `AuditFile.load`). */
export type { LoadVerdict, LoadAnswer } from './rules/load.js';

// inspect and verify: one record per file, in order
export {
  scanFiles,
  scanFilesAsJson,
  type ScanJson,
  type ScanOptions,
  type ScanInput,
  type ScanKind,
  type ScanRecord,
  type VerifyRecord,
} from './workflows/scan.js';
