// The release audit: for every shipped assembly, its hash, identity, strong-name state verified against the
// organization's key, the vendor attribute, whether it needs signing and why, and the signing job that made
// it; plus a summary, the findings, the release manifest and what changed since the previous release.
// Deterministic: the same inputs give the same report (the caller adds a generation time, or not).
import { windowsPathKey } from '../core/windows-names.js';
import { createHash } from 'node:crypto';
import { isSignGateError } from '../core/errors.js';
import { compareFindings, type Finding } from '../core/diagnostic.js';
import { formatVersion } from '../metadata/module-metadata.js';
import { publicKeyToken } from '../strongname/token.js';
import { findRule, ruleDocsUrl } from './index.js';
import { runCheckOnFacts, type CheckResult } from './runner.js';
import { sameKeyBlob } from './keys.js';
import { needsSigning, type CheckInput, type CheckSettings, type FileFacts, type FileRole } from './types.js';
import { collectFacts } from './facts.js';
import { vendorAttributeState, type VendorAttributeState } from './vendor-attribute.js';
import { loadsUnder, loadVerdict, type LoadVerdict } from './load.js';
import { authenticodeOf, authenticodeVerdict, type AuthenticodeVerdict } from '../authenticode/verdict.js';

/** 2: per-file verdict and key match, the inputs in full (public keys, vendor patterns), the job source, per-file changes. 3: Authenticode per file, publisher changes. */
export const AUDIT_FORMAT_VERSION = 3;

/** Findings only an audit makes (a release has signed files, not delay-signed ones). */
export const AuditRules = {
  SG701: { name: 'not-signed-for-release', summary: "A shipped assembly that needs signing is not validly signed with one of the organization's keys.", hint: 'Ship the files `signgate sign` returned and verified, not the delay-signed build output.' },
  SG702: { name: 'manifest-missing-file', summary: 'A file the release manifest lists is not in the release.', hint: 'Add the file to the release, or remove it from the manifest.' },
  SG703: { name: 'manifest-extra-file', summary: 'A file in the release is not in the release manifest.', hint: 'Remove the file from the release, or add it to the manifest.' },
  SG704: { name: 'signature-lost', severity: 'error', summary: "A file that was signed with the organization's key in the previous release is not any more.", hint: 'Ship the file `signgate sign` returned for this release; the build output was probably copied over the signed file.' },
  SG705: { name: 'vendor-attribute-lost', severity: 'error', summary: 'A file that carried the vendor attribute in the previous release does not any more.', hint: 'Put the vendor attribute back into the assembly (AssemblyInfo or the project file) and sign again.' },
  SG706: { name: 'option-changed', severity: 'warning', summary: 'A file is signed for another option than in the previous release.', hint: 'Check that the option change is intended; customers licensed for the old option cannot load the new file.' },
  SG707: { name: 'authenticode-invalid', severity: 'error', summary: 'A shipped file carries an Authenticode signature that does not verify (or cannot be read).', hint: 'Sign with signtool after the strong-name signing by the service, and ship that file; a file changed after Authenticode signing shows as tampered on Windows.' },
  SG708: { name: 'publisher-changed', severity: 'warning', summary: "A file's Authenticode publisher (the signer certificate's subject) differs from the previous release, or its signature is gone.", hint: 'Check that the new publisher certificate is yours and intended; Windows and SmartScreen show the new name to users.' },
} as const satisfies Record<string, { name: string; severity?: 'error' | 'warning'; summary: string; hint: string }>;

/** Check rules that describe delay-signed input or the upload; in a release they are replaced by SG701 or do not apply. */
const NOT_FOR_RELEASE = new Set(['authenticode-before-strong-name', 'already-signed', 'not-delay-signed', 'public-signed', 'invalid-signature', 'duplicate-name', 'upload-too-large', 'option-not-licensed', 'no-license']);

/** A signing job from the local ledger that returned a file with this SHA-256. */
export interface AuditJob {
  readonly jobId: string;
  readonly date: string;
  readonly baseUrl: string;
}

export type { VendorAttributeState } from './vendor-attribute.js';

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
  /** The previous release's audit report (JSON). */
  readonly previous?: AuditReport;
  /** Where jobs came from (default: no ledger known). */
  readonly jobSource?: AuditJobSource;
}

function auditFinding(id: keyof typeof AuditRules, message: string, file: string | null): Finding {
  const rule: { name: string; severity?: 'error' | 'warning'; hint: string } = AuditRules[id];
  return { ruleId: id, rule: rule.name, severity: rule.severity ?? 'error', message, hint: rule.hint, file };
}

/** SG001 as the check reports it, for an error the audit met outside the check rules. */
function malformedFinding(message: string, code: string, file: string): Finding {
  const rule = findRule('malformed')!;
  return { ruleId: rule.id, rule: rule.name, severity: rule.defaultSeverity, message, hint: rule.hint, file, data: { code } };
}

/** "option 12345's key (token 5d00…)" or "the key with token 5d00…" */
function describeKey(k: { optionId: number | null; token: string }): string {
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
      return key === 'expected' ? `signed by the service with the organization's key${optionId !== null ? ` for option ${optionId}` : ''}` : `signed, but with ${other}`;
    case 'invalid-signature':
      return key === 'expected' ? 'signed with the right key, but changed after signing: the signature does not match the bytes' : `broken signature, and with ${other}`;
    default:
      return state;
  }
}

/** What the verdict of a ReadyToRun image adds: why its strong name fails, and what vouches for it instead. */
function readyToRunNote(authenticode: AuthenticodeVerdict | null): string {
  const by = authenticode?.publisher ? ` by ${authenticode.publisher}` : '';
  const vouch = authenticode && authenticode.state !== 'absent' ? `its Authenticode signature${by} is ${authenticode.state}` : 'and it has no Authenticode signature';
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
  const vendorAttribute = needsSigning(f.role) || f.role.kind === 'unreadable' ? unlessUnreadable('reading the vendor attribute', () => vendorAttributeState(f, settings), 'unreadable' as const) : 'not-required';
  return {
    sha256,
    assembly: assembly ? { name: assembly.name, version: formatVersion(assembly.version), culture: assembly.culture, publicKeyToken: assembly.publicKey.length ? publicKeyToken(assembly.publicKey) : null } : null,
    strongName: status
      ? { state: status.state, keyBits: status.keyBits, hashAlgorithm: status.hashAlgorithm, signedWithExpectedKey, key: keyMatch, signatureValid: status.signatureValid, optionId: key?.optionId ?? null }
      : null,
    verdict: describeVerdict(status?.state ?? null, keyMatch, status?.publicKeyToken ?? null, key?.optionId ?? null) + (status?.details.includes('ready-to-run') ? readyToRunNote(authenticode) : ''),
    vendorAttribute,
    load: willLoad ? { ...willLoad, loadsUnder: loadsUnder(willLoad) } : null,
    authenticode,
    errors,
  };
}

/**
 * Builds the audit of a release, in this thread (`audit()` of the library can use worker threads).
 * `inputs[].uploadName` is the path relative to the audited root, used for the manifest and for comparisons;
 * `path` is how the file is shown.
 */
export function buildAudit(inputs: readonly CheckInput[], options: AuditOptions): AuditReport {
  const facts = collectFacts(inputs, options.settings);
  const check = runCheckOnFacts(facts, { settings: options.settings });
  const evidence = new Map([...facts.values()].map((f) => [f.input.path, auditEvidence(f, options.settings)]));
  return assembleAudit(inputs, facts, check, evidence, options);
}

/**
 * The report from the facts, the check and the evidence of every file (made in this thread or in worker threads:
 * the report is the same): audit findings, manifest, changes since the previous release and the summary.
 */
export function assembleAudit(inputs: readonly CheckInput[], facts: ReadonlyMap<string, FileFacts>, check: CheckResult, evidence: ReadonlyMap<string, AuditEvidence>, options: AuditOptions): AuditReport {
  const { settings } = options;
  const byPath = new Map(check.files.map((f) => [f.path, f]));
  const files: AuditFile[] = inputs
    .map((input) => {
      const f = facts.get(input.path)!;
      const result = byPath.get(input.path)!;
      const e = evidence.get(input.path)!;
      const findings: Finding[] = result.findings.filter((x) => !NOT_FOR_RELEASE.has(x.rule));
      if (needsSigning(f.role) && !e.strongName?.signedWithExpectedKey) {
        findings.push(auditFinding('SG701', `${e.verdict}; a release needs it signed by the service with ${settings.keys.map(describeKey).join(' or ')}`, input.path));
      }
      for (const error of e.errors) findings.push(malformedFinding(`${error.code}: ${error.message} (while ${error.while})`, error.code, input.path));
      const authenticode = e.authenticode;
      if (authenticode && (authenticode.state === 'invalid' || authenticode.state === 'unreadable')) {
        findings.push(auditFinding('SG707', `Authenticode signature${authenticode.publisher ? ` by ${authenticode.publisher}` : ''} is ${authenticode.state}: ${authenticode.reason}`, input.path));
      }
      findings.sort(compareFindings);
      const failed = findings.some((x) => x.severity === 'error');
      return {
        path: input.path,
        name: input.uploadName,
        size: input.bytes.length,
        sha256: e.sha256,
        assembly: e.assembly,
        strongName: e.strongName,
        verdict: e.verdict,
        vendorAttribute: e.vendorAttribute,
        needsSigning: needsSigning(f.role),
        role: f.role.kind,
        reason: result.reason,
        job: options.jobs?.get(e.sha256) ?? null,
        outcome: failed ? 'fail' : needsSigning(f.role) ? 'ok' : 'not-required',
        load: e.load,
        findings,
        authenticode,
      } satisfies AuditFile;
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

  const releaseFindings: Finding[] = [];
  let manifest: AuditReport['manifest'] = null;
  if (options.manifest) {
    const key = nameKey(options.manifest.map((m) => m.replace(/\\/g, '/')), files.map((f) => f.name));
    const listed = new Map(options.manifest.map((m) => [key(m.replace(/\\/g, '/')), m]));
    const present = new Map(files.map((f) => [key(f.name), f]));
    const missing = [...listed.entries()].filter(([k]) => !present.has(k)).map(([, m]) => m).sort();
    const extra = [...present.entries()].filter(([k]) => !listed.has(k)).map(([, f]) => f.path).sort();
    for (const m of missing) releaseFindings.push(auditFinding('SG702', `${m} is listed in the manifest but not in the release`, null));
    for (const e of extra) releaseFindings.push(auditFinding('SG703', `${e} is in the release but not in the manifest`, e));
    manifest = { missing, extra };
  }
  const changes = options.previous ? compareAudits(options.previous, files) : null;
  if (changes) {
    const pathOf = new Map(files.map((f) => [f.name, f.path]));
    const key = nameKey(options.previous!.files.map((f) => f.name), files.map((f) => f.name));
    const previousOf = new Map(options.previous!.files.map((f) => [key(f.name), f]));
    for (const c of changes.files) {
      const aspect = (a: AuditAspectChange['aspect']) => c.aspects.find((x) => x.aspect === a);
      const before = previousOf.get(key(c.name))!;
      if (changes.signatureLost.includes(c.name)) releaseFindings.push(auditFinding('SG704', `${before.verdict ?? `${before.strongName?.state}`} in the previous release; now ${files.find((f) => f.name === c.name)!.verdict}`, pathOf.get(c.name) ?? c.name));
      const vendor = aspect('vendor-attribute');
      if (vendor && vendor.before === 'present' && vendor.after !== 'not-required') releaseFindings.push(auditFinding('SG705', `the vendor attribute was present in the previous release; now ${vendor.after}`, pathOf.get(c.name) ?? c.name));
      const option = aspect('option');
      if (option && option.before !== null && option.after !== null) releaseFindings.push(auditFinding('SG706', `signed for option ${option.before} in the previous release; now for option ${option.after}`, pathOf.get(c.name) ?? c.name));
      const publisher = aspect('publisher');
      if (publisher && publisher.before !== null) releaseFindings.push(auditFinding('SG708', `Authenticode publisher ${publisher.before} in the previous release; now ${publisher.after ?? 'no valid Authenticode signature'}`, pathOf.get(c.name) ?? c.name));
    }
  }
  const withDocs = (f: Finding): Finding => ({ ...f, data: { ...(f.data ?? {}), docsUrl: ruleDocsUrl(f.ruleId) } });
  const allFindings = [...files.flatMap((f) => f.findings), ...releaseFindings].sort(compareFindings).map(withDocs);
  const byState: Record<string, number> = {};
  for (const f of files) byState[f.strongName?.state ?? 'unreadable'] = (byState[f.strongName?.state ?? 'unreadable'] ?? 0) + 1;
  const byAuthenticode: Record<string, number> = {};
  for (const f of files) byAuthenticode[f.authenticode?.state ?? 'unreadable'] = (byAuthenticode[f.authenticode?.state ?? 'unreadable'] ?? 0) + 1;
  return {
    formatVersion: AUDIT_FORMAT_VERSION,
    settings: {
      vendor: settings.vendor,
      vendorApi: [...settings.vendorApi],
      vendorNamespace: settings.vendorNamespace,
      keys: settings.keys.map((k) => ({ source: k.source, optionId: k.optionId, token: k.token, publicKey: Buffer.from(k.publicKey.blob).toString('hex') })),
    },
    jobSource: options.jobSource ?? { ledger: null, found: false },
    summary: {
      files: files.length,
      byState: Object.fromEntries(Object.entries(byState).sort()),
      byOutcome: { ok: files.filter((f) => f.outcome === 'ok').length, fail: files.filter((f) => f.outcome === 'fail').length, 'not-required': files.filter((f) => f.outcome === 'not-required').length },
      errors: allFindings.filter((f) => f.severity === 'error').length,
      warnings: allFindings.filter((f) => f.severity === 'warning').length,
      byAuthenticode: Object.fromEntries(Object.entries(byAuthenticode).sort()),
      load: summarizeLoad(files),
    },
    files,
    findings: allFindings,
    manifest,
    changes,
  };
}

function summarizeLoad(files: readonly AuditFile[]): AuditLoadSummary {
  const api = files.flatMap((f) => (f.load?.apiProgram ? [f.load] : []));
  return {
    apiPrograms: api.length,
    runtimeLicense: api.filter((l) => l.runtimeLicense.loads).length,
    developerLicense: api.filter((l) => l.developerLicense.loads).length,
    neither: api.filter((l) => l.loadsUnder === 'neither').length,
    refusedByNetFramework: api.filter((l) => l.netFramework && !l.netFramework.loads).length,
  };
}

type Evidence = Pick<AuditFile, 'name' | 'sha256' | 'assembly' | 'vendorAttribute' | 'authenticode'> & { readonly strongName: (Pick<NonNullable<AuditFile['strongName']>, 'state' | 'signedWithExpectedKey' | 'optionId'>) | null; readonly verdict?: string };

const identityOf = (x: Evidence) => (x.assembly ? `${x.assembly.name}, Version=${x.assembly.version}, Culture=${x.assembly.culture || 'neutral'}` : null);
const signedForRelease = (x: Evidence) => x.strongName?.signedWithExpectedKey === true;
/** The publisher of a valid Authenticode signature, null without one; undefined when the report predates Authenticode. */
const publisherOf = (x: Evidence) => (x.authenticode === undefined ? undefined : x.authenticode?.state === 'valid' ? x.authenticode.publisher : null);

/**
 * What changed between two releases, matching files by their name relative to the release root (case-insensitive).
 * Each file in both releases is compared aspect by aspect (strong-name state, key, identity, vendor attribute,
 * option, bytes); "re-signed" is only signed before and after with the same key and identity and new bytes.
 * The previous report may be of format 1 (it has every field compared here but the verdict).
 */
export function compareAudits(previous: { readonly files: readonly Evidence[] }, current: readonly Evidence[]): AuditChanges {
  const key = nameKey(previous.files.map((f) => f.name), current.map((f) => f.name));
  const before = new Map(previous.files.map((f) => [key(f.name), f]));
  const now = new Map(current.map((f) => [key(f.name), f]));
  const added = current.filter((f) => !before.has(key(f.name))).map((f) => f.name);
  const removed = previous.files.filter((f) => !now.has(key(f.name))).map((f) => f.name);
  const lists = { resigned: [] as string[], signatureLost: [] as string[], newlySigned: [] as string[], keyChanged: [] as string[], identityChanged: [] as string[], vendorAttributeChanged: [] as string[], optionChanged: [] as string[], publisherChanged: [] as string[] };
  const files: AuditFileChange[] = [];
  for (const f of current) {
    const old = before.get(key(f.name));
    if (!old) continue;
    const aspects: AuditAspectChange[] = [];
    const note = (aspect: AuditAspectChange['aspect'], a: string | null, b: string | null) => a !== b && aspects.push({ aspect, before: a, after: b });
    note('strong-name', old.strongName?.state ?? null, f.strongName?.state ?? null);
    note('key', old.assembly?.publicKeyToken ?? null, f.assembly?.publicKeyToken ?? null);
    note('identity', identityOf(old), identityOf(f));
    note('vendor-attribute', old.vendorAttribute, f.vendorAttribute);
    note('option', old.strongName?.optionId?.toString() ?? null, f.strongName?.optionId?.toString() ?? null);
    note('bytes', old.sha256, f.sha256);
    const [publisherBefore, publisherNow] = [publisherOf(old), publisherOf(f)];
    if (publisherBefore !== undefined && publisherNow !== undefined) note('publisher', publisherBefore, publisherNow);
    if (aspects.length === 0) continue;
    const has = (a: AuditAspectChange['aspect']) => aspects.some((x) => x.aspect === a);
    const lost = signedForRelease(old) && !signedForRelease(f);
    const gained = !signedForRelease(old) && signedForRelease(f);
    const vendorLost = old.vendorAttribute === 'present' && f.vendorAttribute !== 'present' && f.vendorAttribute !== 'not-required';
    if (lost) lists.signatureLost.push(f.name);
    if (gained) lists.newlySigned.push(f.name);
    if (has('key')) lists.keyChanged.push(f.name);
    if (has('identity')) lists.identityChanged.push(f.name);
    if (has('vendor-attribute')) lists.vendorAttributeChanged.push(f.name);
    if (has('option') && old.strongName?.optionId != null && f.strongName?.optionId != null) lists.optionChanged.push(f.name);
    if (has('publisher') && publisherBefore !== null) lists.publisherChanged.push(f.name);
    const resigned = signedForRelease(old) && signedForRelease(f) && aspects.every((a) => a.aspect === 'bytes' || (a.aspect === 'publisher' && a.before === null));
    if (resigned) lists.resigned.push(f.name);
    const words: string[] = [];
    if (lost) words.push(`lost its signature: ${old.strongName?.state ?? 'unreadable'} → ${f.strongName?.state ?? 'unreadable'}`);
    else if (gained) words.push(`now signed for release: ${old.strongName?.state ?? 'unreadable'} → ${f.strongName?.state ?? 'unreadable'}`);
    else if (resigned) words.push('re-signed: same identity and key, new bytes');
    else if (has('strong-name')) words.push(`strong name ${old.strongName?.state ?? 'unreadable'} → ${f.strongName?.state ?? 'unreadable'}`);
    for (const a of aspects) {
      if (a.aspect === 'key') words.push(`key token ${a.before ?? 'none'} → ${a.after ?? 'none'}`);
      if (a.aspect === 'identity') words.push(`identity ${a.before ?? 'none'} → ${a.after ?? 'none'}`);
      if (a.aspect === 'vendor-attribute') words.push(`vendor attribute ${a.before} → ${a.after}`);
      if (a.aspect === 'option') words.push(`option ${a.before ?? 'none'} → ${a.after ?? 'none'}`);
      if (a.aspect === 'publisher') words.push(`Authenticode publisher ${a.before ?? 'none'} → ${a.after ?? 'none'}`);
    }
    if (words.length === 0) words.push('new bytes, same evidence');
    files.push({ name: f.name, aspects, regression: lost || vendorLost || (has('publisher') && publisherBefore !== null), summary: words.join('; ') });
  }
  return { added, removed, ...lists, files };
}

/** The fields of a file that are evidence: what the file is and what was found, not where it was read from or which job made it. */
const EVIDENCE_FIELDS = ['size', 'sha256', 'assembly', 'strongName', 'verdict', 'vendorAttribute', 'needsSigning', 'role', 'outcome', 'authenticode'] as const;

const show = (value: unknown) => (value === undefined ? 'absent' : JSON.stringify(value));

/**
 * Every difference between a stored audit report and one made now from the same inputs, one sentence each;
 * empty when they agree. Files match by name (relative to the release root); paths and jobs are not compared
 * (they depend on the working folder and on the machine), nor are the changes since a previous release.
 */
export function diffAuditReports(stored: AuditReport, fresh: AuditReport): string[] {
  const out: string[] = [];
  const a = stored.settings;
  const b = fresh.settings;
  if (a.vendor !== b.vendor) out.push(`vendor: report ${show(a.vendor)}, now ${show(b.vendor)}`);
  const tokens = (s: AuditReport['settings']) => s.keys.map((k) => k.token).join(', ');
  if (tokens(a) !== tokens(b)) out.push(`expected keys: report ${tokens(a)}, now ${tokens(b)}`);
  const key = nameKey(stored.files.map((f) => f.name), fresh.files.map((f) => f.name));
  const storedFiles = new Map(stored.files.map((f) => [key(f.name), f]));
  const freshFiles = new Map(fresh.files.map((f) => [key(f.name), f]));
  for (const f of stored.files) if (!freshFiles.has(key(f.name))) out.push(`${f.name}: in the report, not in the folder`);
  for (const f of fresh.files) if (!storedFiles.has(key(f.name))) out.push(`${f.name}: in the folder, not in the report`);
  for (const f of stored.files) {
    const now = freshFiles.get(key(f.name));
    if (!now) continue;
    for (const field of EVIDENCE_FIELDS) {
      if (field === 'authenticode' && !('authenticode' in f)) continue; // a report of format 2 predates Authenticode
      const x = show(f[field]);
      const y = show(now[field]);
      if (x !== y) out.push(`${f.name}: ${field} in the report ${x}, now ${y}`);
    }
    const ids = (list: readonly Finding[]) => list.map((x) => `${x.ruleId} ${x.message}`).join(' | ') || 'none';
    if (ids(f.findings) !== ids(now.findings)) out.push(`${f.name}: findings in the report ${ids(f.findings)}; now ${ids(now.findings)}`);
  }
  return out;
}

/**
 * How two lists of release names are matched: as Windows compares names (a report made on Windows matches a
 * folder read elsewhere), unless either list holds two names that Windows would take for one; then exactly,
 * so that neither of the two is lost from the comparison.
 */
function nameKey(a: readonly string[], b: readonly string[]): (name: string) => string {
  const unambiguous = (names: readonly string[]) => new Set(names.map(windowsPathKey)).size === new Set(names).size;
  return unambiguous(a) && unambiguous(b) ? windowsPathKey : (name) => name;
}
