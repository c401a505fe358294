// "Will it load?" in words, shared by the HTML and Markdown audits.
import type { AuditLoad, AuditLoadSummary } from '../audit/model.js';
import { describeTarget } from '../rules/load.js';

/** The licenses a file loads under, for a table cell; '' for files that are not assemblies. */
export function loadsUnderText(load: AuditLoad | null | undefined): string {
  if (!load) return '';
  const words = { runtime: 'runtime license', developer: 'developer license', both: 'both licenses', neither: 'neither license' }[load.loadsUnder];
  return load.apiProgram ? words : `${words} (not an API program)`;
}

const answer = (a: { loads: boolean; why: string }) => `${a.loads ? 'yes' : 'no'}: ${a.why}`;

/** Label and text per aspect, for a file's details. */
export function loadDetails(load: AuditLoad | null | undefined): [string, string][] {
  if (!load) return [['Will it load', 'not an assembly']];
  return [
    ['Target framework', describeTarget(load.target)],
    ['Runtime license', answer(load.runtimeLicense)],
    ['Developer license', answer(load.developerLicense)],
    ['.NET Framework', load.netFramework ? answer(load.netFramework) : 'not a .NET Framework target: .NET does not validate strong names'],
  ];
}

/** One sentence over the API programs of the release. */
export function loadSummaryText(s: AuditLoadSummary | undefined): string {
  if (!s) return '';
  return `Will it load: of ${s.apiPrograms} API programs, ${s.runtimeLicense} load under the runtime license (signed by the service, vendor attribute true), ${s.developerLicense} under the developer license (unsigned), ${s.neither} under neither; .NET Framework refuses ${s.refusedByNetFramework} as built.`;
}
