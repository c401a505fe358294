// The release audit's model: the report, its files, findings (SG7xx), changes since the previous release, and the
// options that make one. The audit is a product of its own beside the pre-flight rules: it reads the same facts and
// runs the same check, then judges a release (signed files), not an upload (delay-signed ones).
import type { Finding } from '../core/diagnostic.js';
import { auditRules, ruleDocsUrl } from '../rules/index.js';
import type { CheckSettings, FileRole } from '../rules/types.js';
import type { VendorAttributeState } from '../rules/vendor-attribute.js';
import type { LoadVerdict } from '../rules/load.js';
import type { AuthenticodeVerdict } from '../authenticode/verdict.js';
import type { SignatureEntry } from '../record/signature-record.js';

/**
 * 2: per-file verdict and key match, the inputs in full (public keys, vendor patterns), the job source, per-file changes.
 * 3: Authenticode per file, publisher changes. 4: the signing service's record (`--record`): the entry that signed
 * each file, and where the record came from.
 */
export const AUDIT_FORMAT_VERSION = 4;

/** Findings only an audit makes (a release has signed files, not delay-signed ones), by id: the registry's SG7xx (src/rules). */
const AuditRules = Object.fromEntries(auditRules.map((r) => [r.id, r])) as { readonly [R in AuditRuleOf as R['id']]: R };
type AuditRuleOf = (typeof auditRules)[number];

/** A finding of the audit rule `id`, as every report shows it: its name, severity, hint and docs link from the registry. */
export function auditFinding(id: AuditRuleOf['id'], message: string, file: string | null): Finding {
  const rule = AuditRules[id];
  return { ruleId: id, rule: rule.name, severity: rule.severity, message, hint: rule.hint, file, data: { docsUrl: ruleDocsUrl(id) } };
}

/** Check rules that describe delay-signed input or the upload; in a release they are replaced by SG701 or do not apply. */
export const NOT_FOR_RELEASE = new Set([
  'authenticode-before-strong-name',
  'already-signed',
  'not-delay-signed',
  'public-signed',
  'invalid-signature',
  'duplicate-name',
  'upload-too-large',
  'option-not-licensed',
  'no-license',
]);

/** A signing job from the local ledger that returned a file with this SHA-256. */
export interface AuditJob {
  readonly jobId: string;
  readonly date: string;
  readonly baseUrl: string;
}

export type { VendorAttributeState } from '../rules/vendor-attribute.js';

/** The signing service's record entry for a file (matched by the SHA-256 of the returned bytes): who, when, which job and key. */
export type AuditSignature = Omit<SignatureEntry, 'prev'>;

/** The signature record an audit read (`--record`): the file as shown, its entries and its last entry. */
export interface AuditRecordSource {
  readonly file: string;
  readonly entries: number;
  readonly lastSeq: number;
  readonly lastHash: string;
}

export interface AuditFile {
  /** As shown (relative to the working directory). */
  readonly path: string;
  /** Relative to the audited root, `/`-separated: what manifests and comparisons match on. */
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  readonly assembly: { readonly name: string; readonly version: string; readonly culture: string; readonly publicKeyToken: string | null } | null;
  readonly strongName: {
    readonly state: string;
    readonly keyBits: number | null;
    readonly hashAlgorithm: string | null;
    /** Validly signed with one of the expected keys. */
    readonly signedWithExpectedKey: boolean;
    /** Whether the file's public key is one of the expected keys, another key, or absent. */
    readonly key: 'expected' | 'other' | 'none';
    /** The signature check: true valid, false invalid, null when there is no signature to check. */
    readonly signatureValid: boolean | null;
    readonly optionId: number | null;
  } | null;
  /** The strong-name state in a release manager's words ("delay-signed with the right key, but never signed by the service"). */
  readonly verdict: string;
  readonly vendorAttribute: VendorAttributeState;
  readonly needsSigning: boolean;
  readonly role: FileRole['kind'];
  readonly reason: string;
  readonly job: AuditJob | null;
  readonly outcome: 'ok' | 'fail' | 'not-required';
  /** Whether it will load: under the runtime license, the developer license, and on .NET Framework at all (null for files that are not assemblies). */
  readonly load?: AuditLoad | null;
  readonly findings: readonly Finding[];
  /** The Authenticode signature beside the strong name; null when the file is not a PE image. Absent in reports of format 2. */
  readonly authenticode?: AuthenticodeVerdict | null;
  /** The signature record's entry that returned these bytes; null without a record or entry. Absent before format 4. */
  readonly signature?: AuditSignature | null;
}

/** Will it load, per file: the verdict of load.ts plus which licenses it loads under. */
export type AuditLoad = LoadVerdict & { readonly loadsUnder: 'runtime' | 'developer' | 'both' | 'neither' };

/** Over the API programs of a release: how many load under each license, under neither, and how many .NET Framework refuses. */
export interface AuditLoadSummary {
  readonly apiPrograms: number;
  readonly runtimeLicense: number;
  readonly developerLicense: number;
  readonly neither: number;
  readonly refusedByNetFramework: number;
}

/** One aspect of a file that differs from the previous release. */
export interface AuditAspectChange {
  readonly aspect: 'strong-name' | 'key' | 'identity' | 'vendor-attribute' | 'option' | 'bytes' | 'publisher';
  readonly before: string | null;
  readonly after: string | null;
}

/** A file present in both releases whose bytes or evidence changed. */
export interface AuditFileChange {
  readonly name: string;
  readonly aspects: readonly AuditAspectChange[];
  /** The file is worse for a release than before (signature or vendor attribute lost). */
  readonly regression: boolean;
  /** What changed, in words. */
  readonly summary: string;
}

export interface AuditChanges {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Signed with the organization's key before and now, same key and identity, new bytes: and nothing else. */
  readonly resigned: readonly string[];
  /** Signed with the organization's key before, not now (SG704). */
  readonly signatureLost: readonly string[];
  /** Not signed with the organization's key before, signed now. */
  readonly newlySigned: readonly string[];
  readonly keyChanged: readonly string[];
  readonly identityChanged: readonly string[];
  readonly vendorAttributeChanged: readonly string[];
  readonly optionChanged: readonly string[];
  /** The Authenticode publisher differs from the previous release (SG708); absent in reports of format 2. */
  readonly publisherChanged?: readonly string[];
  /** Every file in both releases that changed, with each changed aspect before and after. */
  readonly files: readonly AuditFileChange[];
}

/** Where the Job column comes from: the local job ledger `signgate sign` writes on the machine that signed. */
export interface AuditJobSource {
  /** The ledger as shown (with ~ for the home folder), or null when not known. */
  readonly ledger: string | null;
  /** Whether a ledger with at least one job was found on the machine that ran the audit. */
  readonly found: boolean;
}

export interface AuditReport {
  readonly formatVersion: number;
  /** The inputs, in full, so that the report can be re-checked without the key files (`--verify-report`). */
  readonly settings: {
    readonly vendor: string;
    readonly vendorApi: readonly string[];
    readonly vendorNamespace: string;
    readonly keys: readonly { readonly source: string; readonly optionId: number | null; readonly token: string; readonly publicKey: string }[];
  };
  readonly jobSource: AuditJobSource;
  /** The signing service's record the report matched files against (`--record`), or null. Absent before format 4. */
  readonly signatureRecord?: AuditRecordSource | null;
  readonly summary: {
    readonly files: number;
    readonly byState: Readonly<Record<string, number>>;
    readonly byOutcome: { readonly ok: number; readonly fail: number; readonly 'not-required': number };
    readonly errors: number;
    readonly warnings: number;
    /** Files by Authenticode state (valid, invalid, absent, unreadable). */
    readonly byAuthenticode?: Readonly<Record<string, number>>;
    readonly load?: AuditLoadSummary;
  };
  readonly files: readonly AuditFile[];
  /** Every finding, file-level and release-level, sorted. */
  readonly findings: readonly Finding[];
  readonly manifest: { readonly missing: readonly string[]; readonly extra: readonly string[] } | null;
  readonly changes: AuditChanges | null;
}

export interface AuditOptions {
  readonly settings: CheckSettings;
  /** SHA-256 of returned files to the job that returned them (from the local job ledger). */
  readonly jobs?: ReadonlyMap<string, AuditJob>;
  /** Paths (relative to the audited root, `/`) the release must contain; compared case-insensitively. */
  readonly manifest?: readonly string[];
  /**
   * The release's files that are not assemblies (`name` relative to the audited root, `/`; `path` as shown), compared
   * with the manifest too: given when the manifest lists the whole folder (it names a file that is not an assembly).
   */
  readonly otherFiles?: readonly { readonly name: string; readonly path: string }[];
  /** The previous release's audit report (JSON). */
  readonly previous?: AuditReport;
  /** Where jobs came from (default: no ledger known). */
  readonly jobSource?: AuditJobSource;
  /**
   * The signing service's record (verified): its entries by the SHA-256 of the bytes they returned, and where it came
   * from. Files signed with the organization's key that have no entry get SG709.
   */
  readonly record?: { readonly source: AuditRecordSource; readonly bySignedSha256: ReadonlyMap<string, AuditSignature> };
}
