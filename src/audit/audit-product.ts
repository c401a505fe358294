// The audit's evidence as a product of the engine (src/engine/): each file's rules and evidence (hashes,
// signatures, load verdicts) in the per-file step, the report on the calling thread. Worker threads load this
// module for `perFile`.
import { assembleCheck, type FileOutcome } from '../rules/rule-runner.js';
import { perFile as checkStep } from '../rules/check-product.js';
import type { CheckSettings, FileFacts } from '../rules/types.js';
import { assembleAudit } from './build.js';
import { auditEvidence, type AuditEvidence } from './evidence.js';
import type { AuditOptions, AuditReport } from './model.js';

/** What the per-file step gives for one file of an audit. */
export interface AuditedFile {
  readonly outcome: FileOutcome;
  readonly evidence: AuditEvidence;
}

const DEFAULT_SEVERITIES = {};

/** The file rules (default severities) and the evidence of one file. */
export function perFile(facts: FileFacts, near: ReadonlyMap<string, FileFacts>, settings: CheckSettings): AuditedFile {
  return { outcome: checkStep(facts, near, settings, DEFAULT_SEVERITIES), evidence: auditEvidence(facts, settings) };
}

/** The audit as the engine's product: the report of the release (see assembleAudit). */
export function auditProduct(options: AuditOptions) {
  return {
    module: 'audit/audit-product',
    settings: options.settings,
    options: DEFAULT_SEVERITIES,
    everyFile: true,
    perFile,
    assemble: (facts: ReadonlyMap<string, FileFacts>, files: ReadonlyMap<string, AuditedFile>): AuditReport => {
      const outcomes = new Map([...files].map(([path, f]) => [path, f.outcome]));
      const evidence = new Map([...files].map(([path, f]) => [path, f.evidence]));
      const inputs = [...facts.values()].map((f) => f.input);
      return assembleAudit(inputs, facts, assembleCheck(facts, outcomes, { settings: options.settings }), evidence, options);
    },
  };
}
