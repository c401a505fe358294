// The service's one decision per uploaded file: the check's verdict on it (the same engine product `signgate check`
// runs, over the organization's keys) turned into sign / return unchanged / Error with the reason. Pure: it reads
// the check's result and the configuration, never the file.
//
// What the service enforces is every finding the check gives at error severity, with one rule switched off:
// SG801 (the upload as built loads under neither license): whether a file loads before it is signed is the
// builder's concern, and signing is what makes it load. docs/serve.md says the same.
import type { SeveritySetting } from '../../core/diagnostic.js';
import type { SignGateError } from '../../core/errors.js';
import { findRule } from '../../rules/index.js';
import { publicKeyCommand } from '../../rules/key-match.js';
import type { FileResult } from '../../rules/rule-runner.js';
import type { License, Organization } from '../server-config.js';
import type { JobMessage } from './job.js';

/** The check's severities in the service: every rule at its default, but SG801. */
export const SERVICE_SEVERITIES: Readonly<Record<string, SeveritySetting>> = { 'loads-under-no-license': 'off' };

/** A message of the decision, before it is given its time. */
export type DecisionMessage = Pick<JobMessage, 'messageType' | 'message'>;

/** What the service does with one file: sign it with an option's key, return it unchanged (Signed), or end it Error. */
export type SigningDecision =
  | { readonly action: 'sign'; readonly license: License; readonly messages: readonly DecisionMessage[] }
  | { readonly action: 'unchanged'; readonly messages: readonly DecisionMessage[] }
  | { readonly action: 'error'; readonly messages: readonly DecisionMessage[] };

const info = (message: string): DecisionMessage => ({ messageType: 'Info', message });
const error = (message: string): DecisionMessage => ({ messageType: 'Error', message });

/**
 * Decides one file from the check's result on it.
 * @param org the organization with the keys the job was accepted with (key rotation: key-rotation.ts)
 * @param retired key tokens the job was accepted with that the configuration no longer holds, with their options
 */
export function decideSigning(file: FileResult, org: Organization, retired: ReadonlyMap<string, number>): SigningDecision {
  const token = file.publicKeyToken;
  const retiredOption = token !== null && !org.licenses.some((l) => l.token === token) ? retired.get(token) : undefined;
  if (retiredOption !== undefined) {
    return {
      action: 'error',
      messages: [
        error(
          `Not signed: the key of option ${retiredOption} this job was accepted with (key token ${token}) is no longer in the service's configuration (the option's key was changed and the old one removed from previousKeys). Build against the option's current public key and upload again.`,
        ),
      ],
    };
  }
  const errors = file.findings.filter((f) => f.severity === 'error');
  if (errors.length) {
    return {
      action: 'error',
      messages: [
        ...errors.map((e) => error(`${e.ruleId} ${e.rule}: ${e.message}. ${e.hint}${e.ruleId === 'SG205' ? ` ${whereThePublicKeyIs(org)}` : ''}`)),
        info('The file was not signed; the package holds it as uploaded.'),
      ],
    };
  }
  // Part of a multi-module assembly uploaded with its manifest: the manifest is signed, its File table binds the
  // netmodule by hash, so the netmodule comes back byte for byte as it went in.
  if (file.role === 'module' && file.outcome === 'pass') return { action: 'unchanged', messages: [info(`Returned unchanged: ${file.reason}.`)] };
  if (!file.needsSigning) {
    return {
      action: 'error',
      messages: [
        error(
          `Not signed: ${file.reason}. Only API programs (assemblies that use the vendor API or carry the vendor attribute), their generated companions and assemblies that carry the public key of one of the organization's options are signed.`,
        ),
      ],
    };
  }
  // No error finding means the key is one of the organization's, byte for byte: the check says which option's.
  const license = file.optionId === undefined ? undefined : org.licenses.find((l) => l.optionId === file.optionId);
  if (!license) {
    return {
      action: 'error',
      messages: [
        error(
          `Not signed: the file's public key (token ${token ?? 'none'}) is not the key of any option this job was accepted with. Build against the option's current public key and upload again.`,
        ),
      ],
    };
  }
  if (file.findings.some((f) => f.rule === 'already-signed')) {
    return { action: 'unchanged', messages: [info(`Already signed with option ${license.optionId}; returned unchanged.`)] };
  }
  return {
    action: 'sign',
    license,
    messages: [
      info(`Signed with option ${license.optionId} (${file.assemblyName} ${file.assemblyVersion}, key token ${license.token}).`),
      ...file.findings.map((w): DecisionMessage => ({ messageType: 'Warning', message: `${w.ruleId} ${w.rule}: ${w.message}` })),
    ],
  };
}

/**
 * The Error of a file whose own bytes failed while it was being signed (past the check's verdict: a fault of
 * that file, the same at every attempt), said as the check says SG001.
 */
export function malformedMessages(fault: SignGateError): DecisionMessage[] {
  const rule = findRule('malformed')!;
  return [error(`${rule.id} ${rule.name}: ${fault.code}: ${fault.message}. ${rule.hint}`), info('The file was not signed; the package holds it as uploaded.')];
}

/** Where an add-in developer gets the right public key file of each of the organization's options. */
function whereThePublicKeyIs(org: Organization): string {
  const ids = org.licenses.map((l) => l.optionId);
  const each = ids.map((id) => publicKeyCommand(id)).join(' or ');
  return `Get the option's public key file from this service: ${each} (GET /licenses/${ids.length === 1 ? ids[0] : '{optionId}'}/public-key; \`signgate licenses\` lists each option's key token).`;
}
