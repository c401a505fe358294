// "Will it load?" in words, shared by the HTML and Markdown audits.
import type { AuditLoad, AuditLoadSummary } from '../audit/model.js';
import { describeTarget } from '../rules/load.js';
import { countOf } from './terminal.js';

/** The licenses a file loads under, for a table cell; '' for files that are not assemblies. */
export function loadsUnderText(load: AuditLoad | null | undefined): string {
  if (!load) return '';
  const words = { runtime: 'runtime license', developer: 'developer license', both: 'both licenses', neither: 'neither license' }[load.loadsUnder];
  return load.apiProgram ? words : `${words} (not an API program)`;
}

const answer = (a: { loads: boolean; why: string }) => `${a.loads ? 'yes' : 'no'}: ${a.why}`;

/**
 * Label and text per aspect, for a file's details. The runtimes a file can run on, and only those: a .NET
 * Framework file (or one whose target is not known) gets a .NET Framework row, a .NET (Core/5+) file none (the
 * target says it, and .NET does not validate strong names), a .NET Standard file one row for each runtime.
 */
export function loadDetails(load: AuditLoad | null | undefined): [string, string][] {
  if (!load) return [['Will it load', 'not an assembly']];
  const rows: [string, string][] = [
    ['Target framework', describeTarget(load.target)],
    ['Runtime license', answer(load.runtimeLicense)],
    ['Developer license', answer(load.developerLicense)],
  ];
  if (load.netFramework) rows.push(['.NET Framework', answer(load.netFramework)]);
  if (load.target.kind === 'standard') rows.push(['.NET (Core/5+)', 'yes as far as the strong name goes: .NET does not validate strong names']);
  return rows;
}

/** One sentence over the API programs of the release. */
export function loadSummaryText(s: AuditLoadSummary | undefined): string {
  if (!s) return '';
  if (s.apiPrograms === 0) return 'Will it load: the release has no API programs (files that use the vendor API).';
  return `Will it load: of ${countOf(s.apiPrograms, 'API program')}, ${s.runtimeLicense} ${s.runtimeLicense === 1 ? 'loads' : 'load'} under the runtime license (signed by the service, vendor attribute true), ${s.developerLicense} under the developer license (unsigned), ${s.neither} under neither; .NET Framework refuses ${s.refusedByNetFramework} as built.`;
}
