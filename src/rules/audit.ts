// The release audit: for every shipped assembly, its hash, identity, strong-name state verified against the
// organization's key, the vendor attribute, whether it needs signing and why, and the signing job that made
// it; plus a summary, the findings, the release manifest and what changed since the previous release.
// Deterministic: the same inputs give the same report (the caller adds a generation time, or not).
import { createHash } from 'node:crypto';
import { compareFindings, type Finding } from '../core/diagnostic.js';
import { formatVersion } from '../metadata/module-metadata.js';
import { publicKeyToken } from '../strongname/token.js';
import { ruleDocsUrl } from './index.js';
import { runCheckOnFacts } from './runner.js';
import { sameKeyBlob } from './keys.js';
import { needsSigning, type CheckInput, type CheckSettings, type FileRole } from './types.js';
import { collectFacts } from './facts.js';
import { vendorAttributeCandidates, vendorAttributeOnAssembly, lookAlikeReason } from './vendor-attribute.js';

export const AUDIT_FORMAT_VERSION = 1;

/** Findings only an audit makes (a release has signed files, not delay-signed ones). */
export const AuditRules = {
  SG701: { name: 'not-signed-for-release', summary: "A shipped assembly that needs signing is not validly signed with one of the organization's keys.", hint: 'Ship the files `signgate sign` returned and verified, not the delay-signed build output.' },
  SG702: { name: 'manifest-missing-file', summary: 'A file the release manifest lists is not in the release.', hint: 'Add the file to the release, or remove it from the manifest.' },
  SG703: { name: 'manifest-extra-file', summary: 'A file in the release is not in the release manifest.', hint: 'Remove the file from the release, or add it to the manifest.' },
} as const;

/** Check rules that describe delay-signed input or the upload; in a release they are replaced by SG701 or do not apply. */
const NOT_FOR_RELEASE = new Set(['already-signed', 'not-delay-signed', 'public-signed', 'invalid-signature', 'duplicate-name', 'upload-too-large', 'option-not-licensed', 'no-license']);

/** A signing job from the local ledger that returned a file with this SHA-256. */
export interface AuditJob {
  readonly jobId: string;
  readonly date: string;
  readonly baseUrl: string;
}

export type VendorAttributeState = 'present' | 'false' | 'wrong-type' | 'look-alike' | 'missing' | 'not-required' | 'unreadable';

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
    readonly optionId: number | null;
  } | null;
  readonly vendorAttribute: VendorAttributeState;
  readonly needsSigning: boolean;
  readonly role: FileRole['kind'];
  readonly reason: string;
  readonly job: AuditJob | null;
  readonly outcome: 'ok' | 'fail' | 'not-required';
  readonly findings: readonly Finding[];
}

export interface AuditChanges {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Same identity and key, new bytes. */
  readonly resigned: readonly string[];
  readonly keyChanged: readonly string[];
  readonly identityChanged: readonly string[];
}

export interface AuditReport {
  readonly formatVersion: number;
  readonly settings: { readonly vendor: string; readonly keys: readonly { readonly source: string; readonly optionId: number | null; readonly token: string }[] };
  readonly summary: {
    readonly files: number;
    readonly byState: Readonly<Record<string, number>>;
    readonly byOutcome: { readonly ok: number; readonly fail: number; readonly 'not-required': number };
    readonly errors: number;
    readonly warnings: number;
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
}

function auditFinding(id: keyof typeof AuditRules, message: string, file: string | null): Finding {
  const rule = AuditRules[id];
  return { ruleId: id, rule: rule.name, severity: 'error', message, hint: rule.hint, file };
}

function vendorAttributeState(facts: Parameters<typeof vendorAttributeCandidates>[0], settings: CheckSettings): VendorAttributeState {
  if (!facts.module) return 'unreadable';
  const c = vendorAttributeCandidates(facts, settings);
  if (!c) return 'not-required';
  if (c.onAssembly.length === 0) return 'missing';
  const attribute = vendorAttributeOnAssembly(c, settings);
  if (!attribute) return c.onAssembly.some((a) => lookAlikeReason(a, settings)) ? 'look-alike' : 'missing';
  const ctor = c.module.attributeConstructor(attribute);
  if (Buffer.from(ctor.signature.bytes).toString('hex') !== '20010102') return 'wrong-type';
  try {
    return c.module.decodeAttribute(attribute).fixedArguments[0]?.value === true ? 'present' : 'false';
  } catch {
    return 'wrong-type';
  }
}

/**
 * Builds the audit of a release. `inputs[].uploadName` is the path relative to the audited root, used for
 * the manifest and for comparisons; `path` is how the file is shown.
 */
export function buildAudit(inputs: readonly CheckInput[], options: AuditOptions): AuditReport {
  const { settings } = options;
  const facts = collectFacts(inputs, settings);
  const check = runCheckOnFacts(facts, { settings });
  const byPath = new Map(check.files.map((f) => [f.path, f]));
  const files: AuditFile[] = inputs
    .map((input) => {
      const f = facts.get(input.path)!;
      const result = byPath.get(input.path)!;
      const sha256 = createHash('sha256').update(input.bytes).digest('hex');
      const status = f.module ? f.status() : undefined;
      const assembly = f.module?.assembly;
      const key = status?.publicKey ? settings.keys.find((k) => sameKeyBlob(k.publicKey, status.publicKey!)) : undefined;
      const signedWithExpectedKey = status?.state === 'signed' && key !== undefined;
      const findings: Finding[] = result.findings.filter((x) => !NOT_FOR_RELEASE.has(x.rule));
      if (needsSigning(f.role) && !signedWithExpectedKey) {
        const token = status?.publicKeyToken ? `key token ${status.publicKeyToken}` : 'no key';
        findings.push(auditFinding('SG701', `the file is ${status?.state ?? 'unreadable'} (${token}); expected validly signed with ${settings.keys.map((k) => k.token).join(' or ')}`, input.path));
      }
      findings.sort(compareFindings);
      const failed = findings.some((x) => x.severity === 'error');
      return {
        path: input.path,
        name: input.uploadName,
        size: input.bytes.length,
        sha256,
        assembly: assembly ? { name: assembly.name, version: formatVersion(assembly.version), culture: assembly.culture, publicKeyToken: assembly.publicKey.length ? publicKeyToken(assembly.publicKey) : null } : null,
        strongName: status
          ? { state: status.state, keyBits: status.keyBits, hashAlgorithm: status.hashAlgorithm, signedWithExpectedKey, optionId: key?.optionId ?? null }
          : null,
        vendorAttribute: needsSigning(f.role) || f.role.kind === 'unreadable' ? vendorAttributeState(f, settings) : 'not-required',
        needsSigning: needsSigning(f.role),
        role: f.role.kind,
        reason: result.reason,
        job: options.jobs?.get(sha256) ?? null,
        outcome: failed ? 'fail' : needsSigning(f.role) ? 'ok' : 'not-required',
        findings,
      } satisfies AuditFile;
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

  const releaseFindings: Finding[] = [];
  let manifest: AuditReport['manifest'] = null;
  if (options.manifest) {
    const listed = new Map(options.manifest.map((m) => [m.replace(/\\/g, '/').toLowerCase(), m]));
    const present = new Map(files.map((f) => [f.name.toLowerCase(), f]));
    const missing = [...listed.entries()].filter(([k]) => !present.has(k)).map(([, m]) => m).sort();
    const extra = [...present.entries()].filter(([k]) => !listed.has(k)).map(([, f]) => f.path).sort();
    for (const m of missing) releaseFindings.push(auditFinding('SG702', `${m} is listed in the manifest but not in the release`, null));
    for (const e of extra) releaseFindings.push(auditFinding('SG703', `${e} is in the release but not in the manifest`, e));
    manifest = { missing, extra };
  }
  const changes = options.previous ? compareAudits(options.previous, files) : null;
  const withDocs = (f: Finding): Finding => ({ ...f, data: { ...(f.data ?? {}), docsUrl: ruleDocsUrl(f.ruleId) } });
  const allFindings = [...files.flatMap((f) => f.findings), ...releaseFindings].sort(compareFindings).map(withDocs);
  const byState: Record<string, number> = {};
  for (const f of files) byState[f.strongName?.state ?? 'unreadable'] = (byState[f.strongName?.state ?? 'unreadable'] ?? 0) + 1;
  return {
    formatVersion: AUDIT_FORMAT_VERSION,
    settings: { vendor: settings.vendor, keys: settings.keys.map((k) => ({ source: k.source, optionId: k.optionId, token: k.token })) },
    summary: {
      files: files.length,
      byState: Object.fromEntries(Object.entries(byState).sort()),
      byOutcome: { ok: files.filter((f) => f.outcome === 'ok').length, fail: files.filter((f) => f.outcome === 'fail').length, 'not-required': files.filter((f) => f.outcome === 'not-required').length },
      errors: allFindings.filter((f) => f.severity === 'error').length,
      warnings: allFindings.filter((f) => f.severity === 'warning').length,
    },
    files,
    findings: allFindings,
    manifest,
    changes,
  };
}

/** What changed between two releases, matching files by their name relative to the release root (case-insensitive). */
export function compareAudits(previous: AuditReport, current: readonly AuditFile[]): AuditChanges {
  const before = new Map(previous.files.map((f) => [f.name.toLowerCase(), f]));
  const now = new Map(current.map((f) => [f.name.toLowerCase(), f]));
  const added = current.filter((f) => !before.has(f.name.toLowerCase())).map((f) => f.name);
  const removed = previous.files.filter((f) => !now.has(f.name.toLowerCase())).map((f) => f.name);
  const resigned: string[] = [];
  const keyChanged: string[] = [];
  const identityChanged: string[] = [];
  for (const f of current) {
    const old = before.get(f.name.toLowerCase());
    if (!old || old.sha256 === f.sha256) continue;
    const id = (x: AuditFile) => (x.assembly ? `${x.assembly.name}|${x.assembly.version}|${x.assembly.culture}` : '');
    if (old.assembly?.publicKeyToken !== f.assembly?.publicKeyToken) keyChanged.push(f.name);
    else if (id(old) !== id(f)) identityChanged.push(f.name);
    else resigned.push(f.name);
  }
  return { added, removed, resigned, keyChanged, identityChanged };
}
