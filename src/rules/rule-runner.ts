// Runs every rule over a set of files. Each rule runs isolated per file: an error while checking
// one file becomes a `malformed` finding for that file and never stops the batch.
import { compareFindings, type Finding, type Severity, type SeveritySetting } from '../core/diagnostic.js';
import { isSignGateError } from '../core/errors.js';
import { describeRole } from './facts.js';
import { findRule, rules } from './index.js';
import { sameKeyBlob } from '../strongname/key-blob.js';
import { inputSize, needsSigning, type CheckSettings, type FileFacts, type FileRole, type Rule, type RuleReport } from './types.js';

export interface CheckOptions {
  readonly settings: CheckSettings;
  /** Severity overrides by rule id or name; `off` disables a rule. */
  readonly severities?: Readonly<Record<string, SeveritySetting>>;
}

export type Outcome = 'pass' | 'fail' | 'not-required';

export interface FileResult {
  readonly path: string;
  readonly size: number;
  readonly assemblyName: string | null;
  /** The assembly's version (Major.Minor.Build.Revision); null without an assembly manifest. */
  readonly assemblyVersion: string | null;
  /** The token of the public key the assembly carries; null when it carries none. */
  readonly publicKeyToken: string | null;
  /** The option whose public key the assembly carries, byte for byte (null: a key given without an option id); absent when none. */
  readonly optionId?: number | null;
  readonly needsSigning: boolean;
  readonly role: FileRole['kind'];
  /** For a netmodule (role `module`): the path of its assembly's manifest module, with which it is uploaded. */
  readonly manifest?: string;
  readonly reason: string;
  /** `fail` when any finding on the file has error severity. */
  readonly outcome: Outcome;
  /** Whether `sign` would upload it (needs signing, not already signed with the organization's key). */
  readonly upload: boolean;
  readonly findings: readonly Finding[];
}

export interface CheckSummary {
  readonly files: number;
  readonly needsSigning: number;
  readonly notRequired: number;
  readonly upload: number;
  readonly passed: number;
  readonly failed: number;
  readonly errors: number;
  readonly warnings: number;
  readonly notes: number;
}

export interface CheckResult {
  readonly settings: {
    readonly vendor: string;
    readonly vendorApi: readonly string[];
    readonly keys: readonly { readonly source: string; readonly optionId: number | null; readonly token: string }[];
    readonly root: string | null;
    readonly maxUploadBytes: number;
    readonly online: boolean;
  };
  readonly files: readonly FileResult[];
  readonly uploadSet: {
    readonly files: readonly string[];
    readonly totalBytes: number;
    readonly maxUploadBytes: number;
    readonly findings: readonly Finding[];
  };
  /** Every finding, sorted by file, offset and rule id; set-level findings last. */
  readonly findings: readonly Finding[];
  readonly summary: CheckSummary;
}

/** The effective severity of each rule: the override, else the default. */
export function resolveSeverities(overrides: Readonly<Record<string, SeveritySetting>> = {}): Map<string, SeveritySetting> {
  const out = new Map<string, SeveritySetting>(
    rules.map((r): [string, SeveritySetting] => [r.id, (r as Rule).enabledByDefault === false ? 'off' : r.defaultSeverity]),
  );
  for (const [key, value] of Object.entries(overrides)) {
    const rule = findRule(key);
    if (rule) out.set(rule.id, value);
  }
  return out;
}

function toFinding(rule: Rule, severity: Severity, report: RuleReport, file: string | null): Finding {
  return {
    ruleId: rule.id,
    rule: rule.name,
    // A report may lower its rule's severity to a note (never raise it).
    severity: report.severity ?? severity,
    message: report.message,
    hint: report.hint ?? rule.hint,
    file: report.file !== undefined ? report.file : file,
    ...(report.location ? { location: report.location } : {}),
    ...(report.data ? { data: report.data } : {}),
  };
}

function crashed(facts: FileFacts, rule: Rule, error: unknown): RuleReport {
  const code = isSignGateError(error) ? error.code : 'SG_ERR_INTERNAL';
  const message = error instanceof Error ? error.message : String(error);
  return { message: `${code}: ${message} (while checking ${rule.name})`, data: { code, rule: rule.id } };
}

/** True when the file is already validly signed with one of the organization's keys. */
function signedWithOrganizationKey(facts: FileFacts, settings: CheckSettings): boolean {
  if (!facts.module) return false;
  const status = facts.status();
  return status.state === 'signed' && status.publicKey !== null && settings.keys.some((k) => sameKeyBlob(k.publicKey, status.publicKey!));
}

/** What the file rules found about one file, and what the set rules need of it: plain data that can cross threads. */
export interface FileOutcome {
  /** Findings of the file rules, in the order of the rules (set-rule findings are added later). */
  readonly findings: readonly Finding[];
  /** Validly signed with one of the organization's keys: `sign` need not upload it. */
  readonly signedWithOrganizationKey: boolean;
}

/**
 * The facts a file rule sees in `all`: the file and the netmodules matched to its File table. Rules that need the
 * whole set are set rules; this keeps a file's findings the same whichever thread checks it.
 */
export function ruleNeighbourhood(facts: FileFacts, all: ReadonlyMap<string, FileFacts>): Map<string, FileFacts> {
  const near = new Map<string, FileFacts>([[facts.input.path, facts]]);
  for (const link of facts.netmodules) {
    const module = link.path === undefined ? undefined : all.get(link.path);
    if (module) near.set(link.path!, module);
  }
  return near;
}

/**
 * Runs every file rule on one file. Each rule runs isolated: an error becomes a `malformed` finding.
 * @param near the file and its netmodules (see ruleNeighbourhood)
 */
export function checkFile(
  facts: FileFacts,
  near: ReadonlyMap<string, FileFacts>,
  settings: CheckSettings,
  severities: ReadonlyMap<string, SeveritySetting>,
): FileOutcome {
  const malformed = rules.find((r) => r.name === 'malformed')!;
  const findings: Finding[] = [];
  const signing = needsSigning(facts.role);
  for (const rule of rules as readonly Rule[]) {
    const severity = severities.get(rule.id)!;
    if (rule.scope !== 'file' || severity === 'off') continue;
    if (!rule.allFiles && (!signing || !facts.module)) continue;
    let reports: RuleReport[];
    try {
      reports = rule.check({ facts, settings, all: near });
    } catch (error) {
      const malformedSeverity = severities.get(malformed.id);
      if (malformedSeverity !== 'off') findings.push(toFinding(malformed, malformedSeverity ?? 'error', crashed(facts, rule, error), facts.input.path));
      continue;
    }
    for (const r of reports) findings.push(toFinding(rule, severity, r, facts.input.path));
  }
  return { findings, signedWithOrganizationKey: signing && signedWithOrganizationKey(facts, settings) };
}

/**
 * The set rules and the report, on the calling thread, from the facts of every file and the outcome of its file
 * rules (made in this thread or in worker threads: the result is the same).
 */
export function assembleCheck(all: ReadonlyMap<string, FileFacts>, outcomes: ReadonlyMap<string, FileOutcome>, options: CheckOptions): CheckResult {
  const { settings } = options;
  const severities = resolveSeverities(options.severities);
  const perFile = new Map<string, Finding[]>([...all.keys()].map((k) => [k, [...outcomes.get(k)!.findings]]));
  const assemblies = [...all.values()].filter((f) => needsSigning(f.role) && !outcomes.get(f.input.path)!.signedWithOrganizationKey);
  // A multi-module assembly is uploaded whole: its netmodules go with its manifest (they are not signed themselves).
  const uploadedManifests = new Set(assemblies.map((f) => f.input.path));
  const uploadFiles = [...all.values()].filter(
    (f) => uploadedManifests.has(f.input.path) || (f.role.kind === 'module' && uploadedManifests.has(f.role.manifest)),
  );
  const upload = { files: uploadFiles, totalBytes: uploadFiles.reduce((n, f) => n + inputSize(f.input), 0) };
  const setFindings: Finding[] = [];
  for (const rule of rules as readonly Rule[]) {
    const severity = severities.get(rule.id)!;
    const checkSet = rule.scope === 'set' ? rule.check : rule.checkSet;
    if (!checkSet || severity === 'off') continue;
    for (const r of checkSet({ all, upload, settings })) {
      const finding = toFinding(rule, severity, r, null);
      if (finding.file && perFile.has(finding.file)) perFile.get(finding.file)!.push(finding);
      else setFindings.push(finding);
    }
  }
  const uploadPaths = new Set(uploadFiles.map((f) => f.input.path));
  const files: FileResult[] = [...all.values()]
    .map((facts) => {
      const findings = perFile.get(facts.input.path)!.sort(compareFindings);
      const signing = needsSigning(facts.role);
      // A netmodule of an assembly that needs signing passes or fails with it: the findings about the
      // netmodule (a stale hash, the vendor attribute in the wrong module) are on the manifest.
      const role = facts.role;
      const withAssembly = role.kind === 'module' && needsSigning(all.get(role.manifest)?.role ?? { kind: 'unreadable' });
      const failed = [...findings, ...(withAssembly ? perFile.get(role.manifest)! : [])].some((f) => f.severity === 'error');
      return {
        path: facts.input.path,
        size: inputSize(facts.input),
        assemblyName: facts.assemblyName ?? null,
        assemblyVersion: facts.assemblyVersion ?? null,
        publicKeyToken: facts.publicKeyToken,
        ...(facts.optionKey ? { optionId: facts.optionKey.optionId } : {}),
        needsSigning: signing,
        role: facts.role.kind,
        ...(role.kind === 'module' ? { manifest: role.manifest } : {}),
        reason: describeRole(facts.role),
        outcome: failed ? 'fail' : signing || withAssembly ? 'pass' : 'not-required',
        upload: uploadPaths.has(facts.input.path),
        findings,
      } satisfies FileResult;
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const findings = [...files.flatMap((f) => f.findings), ...setFindings].sort(compareFindings);
  const count = (s: Severity) => findings.filter((f) => f.severity === s).length;
  return {
    settings: {
      vendor: settings.vendor,
      vendorApi: settings.vendorApi,
      keys: settings.keys.map((k) => ({ source: k.source, optionId: k.optionId, token: k.token })),
      root: settings.root,
      maxUploadBytes: settings.maxUploadBytes,
      online: settings.licensedOptionIds !== undefined,
    },
    files,
    uploadSet: {
      files: [...uploadPaths].sort(),
      totalBytes: upload.totalBytes,
      maxUploadBytes: settings.maxUploadBytes,
      findings: setFindings.sort(compareFindings),
    },
    findings,
    summary: {
      files: files.length,
      needsSigning: files.filter((f) => f.needsSigning).length,
      notRequired: files.filter((f) => f.outcome === 'not-required').length,
      upload: uploadPaths.size,
      passed: files.filter((f) => f.needsSigning && f.outcome === 'pass').length,
      // Netmodules share their assembly's outcome; counted once, with the assembly.
      failed: files.filter((f) => f.outcome === 'fail' && f.role !== 'module').length,
      errors: count('error'),
      warnings: count('warning'),
      notes: count('note'),
    },
  };
}

/** 0 when no finding has error severity, else 1. */
export function checkExitCode(result: CheckResult): 0 | 1 {
  return result.summary.errors > 0 ? 1 : 0;
}
