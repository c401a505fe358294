// MSBuild's canonical diagnostic format, so that an Exec task turns each finding into a build error or
// warning with its code and file: `origin : category code: text` ("MSBuild diagnostic format for tasks";
// the parser is CanonicalError.cs in dotnet/msbuild). An assembly has no line to point at, so the origin is
// the path alone, which the parser takes as the file name; findings about the upload set name signgate.
import type { Finding } from '../core/diagnostic.js';
import type { CheckResult } from '../rules/rule-runner.js';
import { countOf, findingCounts, signingCounts } from './terminal.js';

/** The parser reads one line at a time and splits the origin at the first colon. */
export const oneLine = (text: string) => text.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();

/** A file name with a colon (other than a drive letter) would end the origin early; fall back to no origin. */
export function origin(file: string | null | undefined): string {
  if (file === null || file === undefined || file === '') return 'signgate';
  return /^([a-zA-Z]:)?[^:]*$/.test(file) ? file : 'signgate';
}

/**
 * `error` and `warning` are MSBuild's only categories: the parser takes a line as a diagnostic when `error` or
 * `warning` (then an optional code) comes before the colon that follows the origin. A note's line has `note` there,
 * so MSBuild logs it as the message it is, as written, colons and all.
 */
export function msbuildLine(f: Finding): string {
  const text = inBuildWords(oneLine(`${f.message} (${f.rule}). ${buildHint(f) ?? f.hint}`));
  return `${origin(f.file)} : ${f.severity} ${f.ruleId}: ${text}`;
}

/**
 * In a build, the cure is a build setting, not a command run on obj/ (which the next build overwrites) with a CLI
 * that a NuGet user does not have: SG401 names SigngateFixReferences and its key property.
 */
function buildHint(f: Finding): string | undefined {
  if (f.ruleId !== 'SG401') return undefined;
  const reference = typeof f.data?.['reference'] === 'string' ? f.data['reference'] : 'the library';
  return `Set <SigngateFixReferences>true</SigngateFixReferences> and <SigngateFixKey>your-key.snk</SigngateFixKey> in the project (a key pair of your own, from sn -k): the build then strong-names ${reference} before the compiler runs, and the add-in references and ships that copy. Or use a strong-named build of ${reference}.`;
}

/** The command line's options that are MSBuild properties in a build: a build has no command line to pass them on. */
const PROPERTIES: Readonly<Record<string, string>> = {
  'vendor-api': 'SigngateVendorApi',
  'vendor-namespace': 'SigngateVendorNamespace',
  vendor: 'SigngateVendor',
  key: 'SigngateKey',
  online: 'SigngateCheckOnline',
  'base-url': 'SigngateBaseUrl',
  'access-token-file': 'SigngateAccessTokenFile',
  'record-key': 'SigngateRecordKey',
  'destination-path': 'SigngateDestination',
};

/** `fix` in a build: its key and hash are SigngateFixReferences' own properties. */
export const FIX_PROPERTIES: Readonly<Record<string, string>> = { ...PROPERTIES, key: 'SigngateFixKey', hash: 'SigngateFixHash' };

/** A value's placeholders without their brackets (`<optionId>_public.snk`, `<…/<service-name>/v1.0>`), inside a property's. */
function withoutPlaceholders(value: string): string {
  let text = value;
  for (let before = ''; before !== text; ) {
    before = text;
    text = text.replace(/<([^<>]*)>/g, '$1');
  }
  return text;
}

/**
 * A finding's or an error's words as a build reads them: `--vendor-api "Contoso.*"` becomes
 * `<SigngateVendorApi>Contoso.*</SigngateVendorApi>`, a bare `--key` SigngateKey, and "Pass" a property "Set" it.
 */
export function inBuildWords(text: string, properties: Readonly<Record<string, string>> = PROPERTIES): string {
  const names = Object.keys(properties)
    .sort((a, b) => b.length - a.length)
    .join('|');
  const option = new RegExp(`--(${names})\\b(?!-)(?: (?!--|or\\b|and\\b|with\\b)("[^"]*"|[^\\s(),;?]+))?`, 'g');
  return (
    text
      .replace(option, (_, name: string, value?: string) => {
        const property = properties[name]!;
        if (name === 'online') return `<${property}>true</${property}>`;
        // A lowercase word after the option is the sentence going on ("no --base-url is given"), not its value.
        if (value === undefined || /^[a-z]+$/.test(value)) return value === undefined ? property : `${property} ${value}`;
        const bare = value.replace(/^"|"$/g, '');
        const end = /[.:]$/.test(bare) && !/\.\*?$/.test(bare.slice(0, -1)) ? bare.slice(-1) : '';
        const inner = withoutPlaceholders(end ? bare.slice(0, -1) : bare);
        return `<${property}>${inner}</${property}>${end}`;
      })
      .replace(/\b[Pp]ass (?=<Signgate|Signgate[A-Z])/g, (pass) => `${pass[0] === 'P' ? 'S' : 's'}et `)
      // A build never puts the token on a command line (signgate refuses it there): no advice against it.
      .replace(/ \(avoid --access-token\b[^)]*\)/g, '')
  );
}

export function formatMsbuild(result: CheckResult): string {
  // The summary must not itself read as a diagnostic: no colon before the words error or warning.
  const summary = `signgate check, ${countOf(result.summary.files, 'file')}, ${signingCounts(result)}, ${findingCounts(result)}`;
  return [...result.findings.map(msbuildLine), summary, ''].join('\n');
}
