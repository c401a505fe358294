// The organization's licenses on the service as the check uses them (option ids, and each option's key token where
// the service reports it), and an option's public key file fetched from the service into a file.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ServiceError, UsageError } from '../core/errors.js';
import type { CheckSettings, ExpectedKey, LicensedKeyToken } from '../rules/types.js';
import type { LicenseEntry } from '../service-client/answers.js';
import type { ServiceClient } from '../service-client/client.js';
import { parsePublicKeyBlob } from '../strongname/key-blob.js';
import { publicKeyToken } from '../strongname/key-token.js';
import { writeFileAtomic } from './files.js';
import { displayPath } from './input-paths.js';

/** What an online check takes from GET /licenses, and what the user should know of it that is not a finding. */
export interface OnlineLicenses {
  readonly settings: Required<Pick<CheckSettings, 'licensedOptionIds' | 'licensedKeyTokens'>>;
  /**
   * Key files that could not be compared with their option's key: the service reports no token for the option
   * (the vendor's service does not have the extension), or one that is not a token. Said once per reason.
   */
  readonly notes: readonly string[];
}

/**
 * The check settings of GET /licenses' entries, and notes on the key files among `keys` whose key could not be
 * compared with the service's: a key file whose option the service does not list is left to SG601.
 */
export function onlineLicenses(entries: readonly LicenseEntry[], keys: readonly ExpectedKey[]): OnlineLicenses {
  const licensedKeyTokens: LicensedKeyToken[] = entries.flatMap((e) =>
    e.publicKeyToken ? [{ optionId: e.optionId, token: e.publicKeyToken, saveAs: freshKeyPath(e.optionId) }] : [],
  );
  const notes: string[] = [];
  const unreported: string[] = [];
  for (const key of keys) {
    const entry = entries.find((e) => e.optionId === key.optionId);
    if (!entry || entry.publicKeyToken) continue;
    if (entry.publicKeyTokenProblem) {
      notes.push(
        `option ${entry.optionId}: the signing service's ${entry.publicKeyTokenProblem}; it is taken as absent, so ${key.source} could not be compared with the option's key`,
      );
    } else unreported.push(key.source);
  }
  if (unreported.length) {
    notes.push(
      `the signing service does not report its options' public key tokens (publicKeyToken in GET /licenses, an extension of signgate's service), so ${unreported.join(', ')} could not be compared with the option's key; a key file of the wrong key shows only when the service signs`,
    );
  }
  return { settings: { licensedOptionIds: entries.map((e) => e.optionId), licensedKeyTokens }, notes };
}

/**
 * Where `signgate licenses --public-key <optionId> --out` may write an option's public key file without overwriting a
 * file (the key file given, say): `<optionId>_public.snk` in `cwd`, else in the first of the folders `service-key`,
 * `service-key-2`, … that holds none (the name stays `<optionId>_public.snk`, which names the option). Shown as inputs are.
 */
export function freshKeyPath(optionId: number, cwd = process.cwd()): string {
  const name = `${optionId}_public.snk`;
  for (let i = 0; ; i++) {
    const path = join(cwd, ...(i === 0 ? [] : [i === 1 ? 'service-key' : `service-key-${i}`]), name);
    if (!existsSync(path)) return displayPath(path, cwd);
  }
}

/** An option's public key file written by savePublicKey. */
export interface SavedPublicKey {
  readonly optionId: number;
  /** Where it was written, as shown to the user. */
  readonly path: string;
  /** Its public key token (16 lower-case hex digits). */
  readonly token: string;
  readonly bitLength: number;
}

/**
 * Fetches the option's public key file from the service (GET /licenses/{optionId}/public-key, signgate's extension)
 * and writes it to `out` (temporary file, then rename). The bytes must be a public key blob whose token is the one
 * GET /licenses reports for the option, when it reports one; otherwise nothing is written.
 * @throws UsageError for an option the organization does not hold; ServiceError SG_ERR_HTTP_STATUS for a service
 *   without the endpoint, SG_ERR_HTTP_BAD_RESPONSE for bytes that are no public key or not the option's
 */
export async function savePublicKey(
  client: Pick<ServiceClient, 'baseUrl' | 'licenseEntries' | 'publicKey'>,
  optionId: number,
  out: string,
): Promise<SavedPublicKey> {
  const entries = await client.licenseEntries();
  const entry = entries.find((e) => e.optionId === optionId);
  if (!entry) {
    const held = entries.length ? `it holds ${entries.map((e) => e.optionId).join(', ')}` : 'it holds none';
    throw new UsageError(
      `the organization holds no license option ${optionId} (${held}); nothing was written`,
      'Run `signgate licenses` to see the options, and pass one of them to --public-key.',
    );
  }
  const url = `${client.baseUrl.replace(/\/+$/, '')}/licenses/${optionId}/public-key`;
  let bytes: Uint8Array;
  try {
    bytes = await client.publicKey(optionId);
  } catch (error) {
    if (error instanceof ServiceError && error.status === 404) {
      throw new ServiceError(
        'SG_ERR_HTTP_STATUS',
        `GET ${url} answered 404: the service lists option ${optionId} but does not hand out public key files (an extension of signgate's service); ask the vendor for ${optionId}_public.snk. Nothing was written`,
        { method: 'GET', url, status: 404 },
        { cause: error },
      );
    }
    throw error;
  }
  const bad = (why: string) =>
    new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `GET ${url} answered ${bytes.length} bytes that ${why}; nothing was written`, { method: 'GET', url });
  let bitLength: number;
  try {
    const key = parsePublicKeyBlob(bytes);
    if (key.isEcmaKey) throw bad('are the ECMA neutral key, not an option key');
    bitLength = key.bitLength;
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw bad(`are not a public key blob (${error instanceof Error ? error.message : String(error)})`);
  }
  const token = publicKeyToken(bytes);
  if (entry.publicKeyToken && entry.publicKeyToken !== token)
    throw bad(`have key token ${token}, but GET /licenses reports ${entry.publicKeyToken} for option ${optionId}`);
  const target = resolve(out);
  mkdirSync(dirname(target), { recursive: true });
  writeFileAtomic(target, bytes);
  return { optionId, path: displayPath(target), token, bitLength };
}
