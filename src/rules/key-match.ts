// Comparing an assembly's public key with the organization's key files, and naming those files in hints.
import type { ExpectedKey } from './types.js';

/**
 * The file name a project should point <AssemblyOriginatorKeyFile> at: the name the user gave, else the last
 * segment of the source when it is a key file path, else the license convention `<optionId>_public.snk`.
 */
export function keyFileName(key: ExpectedKey | undefined): string {
  if (key?.fileName) return key.fileName;
  const last = key?.source.split(/[\\/]/).pop();
  if (last && /\.snk$/i.test(last)) return last;
  return `${key?.optionId ?? '<optionId>'}_public.snk`;
}

/** The <AssemblyOriginatorKeyFile> element for the configured keys; further options are named after it. */
export function keyFileElement(keys: readonly ExpectedKey[]): string {
  const [first, ...others] = [...new Set(keys.length ? keys.map(keyFileName) : [keyFileName(undefined)])];
  const element = `<AssemblyOriginatorKeyFile>${first}</AssemblyOriginatorKeyFile>`;
  return others.length ? `${element} (or ${others.join(' or ')} for another license option)` : element;
}

/** The command that writes an option's public key file from the service (`--out` quoted when it has spaces). */
export function publicKeyCommand(optionId: number, out = `${optionId}_public.snk`): string {
  return `\`signgate licenses --public-key ${optionId} --out ${/\s/.test(out) ? `"${out}"` : out}\``;
}
