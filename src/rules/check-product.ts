// The check's findings as a product of the engine (src/engine/): each file's rules in the per-file step, the set
// rules and the result on the calling thread. Worker threads load this module for `perFile`.
import type { SeveritySetting } from '../core/diagnostic.js';
import { assembleCheck, checkFile, resolveSeverities, type CheckOptions, type CheckResult, type FileOutcome } from './rule-runner.js';
import type { CheckSettings, FileFacts } from './types.js';

/** The per-file step's data: the rule severities, as given (resolved in the step). */
export interface CheckStepOptions {
  readonly severities?: Readonly<Record<string, SeveritySetting>> | undefined;
}

// The last severities resolved, for the files of one task (the options object is the same for all of them).
let resolved: { readonly of: CheckStepOptions; readonly severities: Map<string, SeveritySetting> } | undefined;

/** The file rules over one file: its findings, and whether it is already signed with the organization's key. */
export function perFile(facts: FileFacts, near: ReadonlyMap<string, FileFacts>, settings: CheckSettings, options: CheckStepOptions): FileOutcome {
  if (resolved?.of !== options) resolved = { of: options, severities: resolveSeverities(options.severities) };
  return checkFile(facts, near, settings, resolved.severities);
}

/** The check as the engine's product: findings per file and for the upload set. */
export function checkProduct(options: CheckOptions) {
  return {
    module: 'rules/check-product',
    settings: options.settings,
    options: { severities: options.severities } satisfies CheckStepOptions,
    everyFile: false,
    perFile,
    assemble: (facts: ReadonlyMap<string, FileFacts>, outcomes: ReadonlyMap<string, FileOutcome>): CheckResult => assembleCheck(facts, outcomes, options),
  };
}
