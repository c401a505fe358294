// The audit's evidence as a product of the engine (src/engine/): each file's rules and evidence (hashes,
// signatures, load verdicts, and for a bill of materials its SHA-512 and references) in the per-file step, the
// report on the calling thread. Worker threads load this module for `perFile`.
import { assembleCheck, type FileOutcome } from '../rules/rule-runner.js';
import { perFile as checkStep } from '../rules/check-product.js';
import type { CheckSettings, FileFacts } from '../rules/types.js';
import { assembleAudit } from './build.js';
import { auditEvidence, type AuditEvidence } from './evidence.js';
import type { AuditOptions, AuditReport } from './model.js';
import { sbomEvidence, type SbomFileEvidence } from './sbom-evidence.js';

/** What the per-file step gives for one file of an audit. */
export interface AuditedFile {
  readonly outcome: FileOutcome;
  readonly evidence: AuditEvidence;
  /** With `sbom`: what the bill of materials needs besides. */
  readonly sbom?: SbomFileEvidence;
}

/** The per-file step's own data: whether the bill of materials' evidence is read too. */
export interface AuditStepOptions {
  readonly sbom: boolean;
}

/** The report, and each file's bill-of-materials evidence by display path. */
export interface AuditResult {
  readonly report: AuditReport;
  readonly sbom: ReadonlyMap<string, SbomFileEvidence>;
}

const DEFAULT_SEVERITIES = {};

/** The file rules (default severities) and the evidence of one file. */
export function perFile(facts: FileFacts, near: ReadonlyMap<string, FileFacts>, settings: CheckSettings, options: AuditStepOptions): AuditedFile {
  const audited = { outcome: checkStep(facts, near, settings, DEFAULT_SEVERITIES), evidence: auditEvidence(facts, settings) };
  return options.sbom ? { ...audited, sbom: sbomEvidence(facts) } : audited;
}

function product<R>(options: AuditOptions, sbom: boolean, result: (report: AuditReport, files: ReadonlyMap<string, AuditedFile>) => R) {
  return {
    module: 'audit/audit-product',
    settings: options.settings,
    options: { sbom } satisfies AuditStepOptions,
    everyFile: true,
    perFile,
    assemble: (facts: ReadonlyMap<string, FileFacts>, files: ReadonlyMap<string, AuditedFile>): R => {
      const outcomes = new Map([...files].map(([path, f]) => [path, f.outcome]));
      const evidence = new Map([...files].map(([path, f]) => [path, f.evidence]));
      const inputs = [...facts.values()].map((f) => f.input);
      return result(assembleAudit(inputs, facts, assembleCheck(facts, outcomes, { settings: options.settings }), evidence, options), files);
    },
  };
}

/** The audit as the engine's product: the report of the release (see assembleAudit). */
export function auditProduct(options: AuditOptions) {
  return product(options, false, (report) => report);
}

/** The audit with each file's bill-of-materials evidence (SHA-512, references, version attributes), from the same step. */
export function auditWithSbomProduct(options: AuditOptions) {
  return product(options, true, (report, files): AuditResult => ({ report, sbom: new Map([...files].map(([path, f]) => [path, f.sbom!])) }));
}
