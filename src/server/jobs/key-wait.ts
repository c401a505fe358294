// A job whose signing key cannot be used now (a PKCS#11 token away, a wrong or locked PIN, a module that does not
// answer) waits for it: it is put back in the queue, not failed, and signed as soon as a worker can use the key (the
// same process, once the token is back or the PIN mended, without a restart). Only after limits.keyWaitSeconds of
// waiting do its files end Error. A worker that found a key unusable takes no job waiting for that key until the key
// proves usable again (queue-worker.ts), so that a worker that can sign takes it.
import { FileState } from '../../core/file-states.js';
import type { FastifyBaseLogger } from 'fastify';
import { ErrorCodes } from '../../core/error-codes.js';
import type { SignGateError } from '../../core/errors.js';
import type { License } from '../server-config.js';
import type { JobFile, JobRecord } from '../domain/job.js';

/** An option's key, as `organization/optionId`: what a waiting job and a worker's unusable keys are named by. */
export const optionKeyName = (organization: string, optionId: number) => `${organization}/${optionId}`;

/** Thrown out of processJob: the job cannot be signed now, for want of these keys. */
export class KeyWait extends Error {
  constructor(readonly keys: readonly { readonly name: string; readonly license: License; readonly error: SignGateError }[]) {
    super(`waiting for the signing key of ${keys.map((k) => `option ${k.name}`).join(', ')}: ${keys.map((k) => k.error.code).join(', ')}`);
  }
}

/** Whether a job that waits for a key has waited its `keyWaitSeconds` out (then its files end Error). */
export function keyWaitOver(record: JobRecord, keyWaitSeconds: number, now = Date.now()): boolean {
  return record.keyWait !== undefined && now - Date.parse(record.keyWait.since) >= keyWaitSeconds * 1000;
}

/**
 * Marks a job as waiting for keys (markWaiting) and logs it: at warn the first time, at debug while it goes on.
 * `fields` are added to the log line (the worker).
 */
export function noteWaiting(log: FastifyBaseLogger, record: JobRecord, wait: KeyWait, keyWaitSeconds: number, fields: Record<string, unknown> = {}): void {
  const first = record.keyWait === undefined;
  markWaiting(record, wait, keyWaitSeconds);
  const line = {
    job: record.id,
    organization: record.organization,
    options: record.keyWait!.options,
    codes: wait.keys.map((k) => k.error.code),
    since: record.keyWait!.since,
    ...fields,
  };
  if (first) log.warn(line, 'job waits for its signing key; it is queued again for a worker that can use it, not failed');
  else log.debug(line, 'job still waits for its signing key');
}

/**
 * Marks a job as waiting for keys (since the first time it had to): every file back to Pending with a message a client
 * can show, in words, without paths, token names or anything of a PIN.
 */
export function markWaiting(record: JobRecord, wait: KeyWait, keyWaitSeconds: number, now = new Date()): void {
  const since = record.keyWait?.since ?? now.toISOString();
  record.keyWait = { since, options: [...new Set(wait.keys.map((k) => k.name))] };
  const until = new Date(Date.parse(since) + keyWaitSeconds * 1000).toISOString();
  const why = wait.keys.map((k) => `option ${k.license.optionId}: ${ErrorCodes[k.error.code]} (${k.error.code})`).join('; ');
  const text = `Waiting for the signing key (${why}). The service's operator has been told (/readyz); the job is kept and signed as soon as the key can be used, or its files end with an error at ${until} (limits.keyWaitSeconds).`;
  for (const f of record.assemblies as JobFile[]) {
    f.fileProcessingState = FileState.Pending;
    f.messages = [{ dateTime: now.toISOString(), messageType: 'Info', message: text }];
  }
}
