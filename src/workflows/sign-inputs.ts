// What sign uploads, and where to: the inputs outside the destination folder, the service's address and the access
// token, each checked before the service is asked anything.
import { isAbsolute, relative, resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { inHand, type EngineInput } from '../engine/index.js';
import type { CheckInput } from '../rules/types.js';
import { resolveAccessToken, type AccessTokenOptions } from './access-token.js';
import { noAssembliesError } from './input-paths.js';

/** What sign takes of the prepared check (pipeline/index.ts: prepareCheck). */
export interface PreparedToSign {
  readonly notes: readonly string[];
  readonly inputs: readonly EngineInput[];
  readonly paths: readonly string[];
  readonly baseUrl: string | undefined;
}

/**
 * The inputs to sign (those outside the destination), and the service's address and token.
 * @throws UsageError when nothing is left to sign, or the address or token is missing
 */
export function signInputs(
  read: PreparedToSign,
  options: AccessTokenOptions,
  destination: string,
  log: (line: string) => void,
): { inputs: CheckInput[]; baseUrl: string; token: string } {
  for (const note of read.notes) log(`note: ${note}`);
  const inputs = uploadCandidates(read, destination);
  const { baseUrl } = read;
  const token = resolveAccessToken(options);
  if (!baseUrl)
    throw new UsageError(
      `sign needs the service's address${token ? '' : ' and an access token'}: no --base-url is given`,
      'Pass --base-url <…/<service-name>/v1.0> (or "baseUrl" in signgate.config.json, or SIGNGATE_BASE_URL).',
    );
  if (!token)
    throw new UsageError(
      'sign needs an access token: none is given',
      'Pass --access-token-file <file> or set SIGNGATE_ACCESS_TOKEN (avoid --access-token: it shows in process lists).',
    );
  return { inputs, baseUrl, token };
}

/**
 * The inputs outside the destination folder, which is often inside the build output (bin/Release/signed): earlier
 * results there are not inputs.
 * @throws UsageError when no file is left
 */
export function uploadCandidates(read: Pick<PreparedToSign, 'inputs' | 'paths'>, destination: string): CheckInput[] {
  if (read.inputs.length === 0) throw noAssembliesError(read.paths);
  const inDestination = (p: string) => {
    const rel = relative(destination, resolve(p));
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  };
  // Held inputs: their bytes are in hand (prepareCheck with no reading choice reads into memory).
  const inputs = read.inputs.map((i) => inHand(i)).filter((i) => !inDestination(i.path));
  if (inputs.length === 0)
    throw new UsageError(
      'no files to sign outside the destination folder',
      'Point signgate at the build output, and --destination-path somewhere else or below it.',
    );
  return inputs;
}
