// The audit of a release: the check over the same facts, each file's evidence, audit findings (SG7xx), the release
// manifest, the changes since the previous release and the summary. Deterministic: the same inputs give the same
// report (the caller adds a generation time, or not).
import { compareFindings, type Finding } from '../core/diagnostic.js';
import { findRule, ruleDocsUrl } from '../rules/index.js';
import type { CheckResult } from '../rules/rule-runner.js';
import { inputSize, needsSigning, type CheckInput, type FileFacts } from '../rules/types.js';
import {
  AUDIT_FORMAT_VERSION,
  auditFinding,
  NOT_FOR_RELEASE,
  type AuditAspectChange,
  type AuditFile,
  type AuditLoadSummary,
  type AuditOptions,
  type AuditReport,
} from './model.js';
import { describeKey, type AuditEvidence } from './evidence.js';
import { compareAudits, nameKey } from './compare.js';

/** SG001 as the check reports it, for an error the audit met outside the check rules. */
function malformedFinding(message: string, code: string, file: string): Finding {
  const rule = findRule('malformed')!;
  return { ruleId: rule.id, rule: rule.name, severity: rule.defaultSeverity, message, hint: rule.hint, file, data: { code } };
}

/**
 * The report from the facts, the check and the evidence of every file (made in this thread or in worker threads:
 * the report is the same): audit findings, manifest, changes since the previous release and the summary.
 */
export function assembleAudit(
  inputs: readonly CheckInput[],
  facts: ReadonlyMap<string, FileFacts>,
  check: CheckResult,
  evidence: ReadonlyMap<string, AuditEvidence>,
  options: AuditOptions,
): AuditReport {
  const { settings } = options;
  const byPath = new Map(check.files.map((f) => [f.path, f]));
  const files: AuditFile[] = inputs
    .map((input) => {
      const f = facts.get(input.path)!;
      const result = byPath.get(input.path)!;
      const e = evidence.get(input.path)!;
      const findings: Finding[] = result.findings.filter((x) => !NOT_FOR_RELEASE.has(x.rule));
      if (needsSigning(f.role) && !e.strongName?.signedWithExpectedKey) {
        findings.push(
          auditFinding('SG701', `${e.verdict}; a release needs it signed by the service with ${settings.keys.map(describeKey).join(' or ')}`, input.path),
        );
      }
      for (const error of e.errors) findings.push(malformedFinding(`${error.code}: ${error.message} (while ${error.while})`, error.code, input.path));
      const signature = options.record?.bySignedSha256.get(e.sha256) ?? null;
      if (options.record && !signature && needsSigning(f.role) && e.strongName?.signedWithExpectedKey) {
        findings.push(
          auditFinding(
            'SG709',
            `signed with ${describeKey({ optionId: e.strongName.optionId, token: e.assembly?.publicKeyToken ?? '?' })}, but the signature record ${options.record.source.file} (${options.record.source.entries} ${options.record.source.entries === 1 ? 'entry' : 'entries'}) has no entry that returned these bytes (SHA-256 ${e.sha256})`,
            input.path,
          ),
        );
      }
      const authenticode = e.authenticode;
      if (authenticode && (authenticode.state === 'invalid' || authenticode.state === 'unreadable')) {
        findings.push(
          auditFinding(
            'SG707',
            `Authenticode signature${authenticode.publisher ? ` by ${authenticode.publisher}` : ''} is ${authenticode.state}: ${authenticode.reason}`,
            input.path,
          ),
        );
      }
      findings.sort(compareFindings);
      const failed = findings.some((x) => x.severity === 'error');
      return {
        path: input.path,
        name: input.uploadName,
        size: inputSize(input),
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
        signature,
      } satisfies AuditFile;
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

  const releaseFindings: Finding[] = [];
  let manifest: AuditReport['manifest'] = null;
  if (options.manifest) {
    // The assemblies, and the other files when the manifest lists the whole folder.
    const inRelease: readonly { readonly name: string; readonly path: string }[] = [...files, ...(options.otherFiles ?? [])];
    const key = nameKey(
      options.manifest.map((m) => m.replace(/\\/g, '/')),
      inRelease.map((f) => f.name),
    );
    const listed = new Map(options.manifest.map((m) => [key(m.replace(/\\/g, '/')), m]));
    const present = new Map(inRelease.map((f) => [key(f.name), f]));
    const missing = [...listed.entries()]
      .filter(([k]) => !present.has(k))
      .map(([, m]) => m)
      .sort();
    const extra = [...present.entries()]
      .filter(([k]) => !listed.has(k))
      .map(([, f]) => f.path)
      .sort();
    for (const m of missing) releaseFindings.push(auditFinding('SG702', `${m} is listed in the manifest but not in the release`, null));
    for (const e of extra) releaseFindings.push(auditFinding('SG703', `${e} is in the release but not in the manifest`, e));
    manifest = { missing, extra };
  }
  const changes = options.previous ? compareAudits(options.previous, files) : null;
  if (changes) {
    const pathOf = new Map(files.map((f) => [f.name, f.path]));
    const key = nameKey(
      options.previous!.files.map((f) => f.name),
      files.map((f) => f.name),
    );
    const previousOf = new Map(options.previous!.files.map((f) => [key(f.name), f]));
    for (const c of changes.files) {
      const aspect = (a: AuditAspectChange['aspect']) => c.aspects.find((x) => x.aspect === a);
      const before = previousOf.get(key(c.name))!;
      if (changes.signatureLost.includes(c.name))
        releaseFindings.push(
          auditFinding(
            'SG704',
            `${before.verdict ?? `${before.strongName?.state}`} in the previous release; now ${files.find((f) => f.name === c.name)!.verdict}`,
            pathOf.get(c.name) ?? c.name,
          ),
        );
      const vendor = aspect('vendor-attribute');
      if (vendor && vendor.before === 'present' && vendor.after !== 'not-required')
        releaseFindings.push(
          auditFinding('SG705', `the vendor attribute was present in the previous release; now ${vendor.after}`, pathOf.get(c.name) ?? c.name),
        );
      const option = aspect('option');
      if (option && option.before !== null && option.after !== null)
        releaseFindings.push(
          auditFinding('SG706', `signed for option ${option.before} in the previous release; now for option ${option.after}`, pathOf.get(c.name) ?? c.name),
        );
      const publisher = aspect('publisher');
      if (publisher && publisher.before !== null)
        releaseFindings.push(
          auditFinding(
            'SG708',
            `Authenticode publisher ${publisher.before} in the previous release; now ${publisher.after ?? 'no valid Authenticode signature'}`,
            pathOf.get(c.name) ?? c.name,
          ),
        );
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
    signatureRecord: options.record?.source ?? null,
    summary: {
      files: files.length,
      byState: Object.fromEntries(Object.entries(byState).sort()),
      byOutcome: {
        ok: files.filter((f) => f.outcome === 'ok').length,
        fail: files.filter((f) => f.outcome === 'fail').length,
        'not-required': files.filter((f) => f.outcome === 'not-required').length,
      },
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
