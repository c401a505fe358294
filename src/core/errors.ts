// The error hierarchy: one base class with a stable code, a few subclasses split by who can act on them.
import type { ErrorCode } from './error-codes.js';

/**
 * Whose fault an error is, decided where it is thrown:
 * - `input`: the bytes of one input file (its PE, metadata, key blob, signature, Authenticode table, or an archive
 *   member) are not what signgate reads or signs. That file gets the error as its finding (SG001, or Error in the
 *   service); every other file is still judged, and no attempt again changes it.
 * - `environment`: what the run stands on (the user's key file, a configuration, a read or a write, the service):
 *   the run stops and says what to fix.
 */
export type ErrorFault = 'input' | 'environment';

/** Base of every error signgate throws on purpose. `code` is stable and listed in docs/errors.md. */
export class SignGateError extends Error {
  readonly code: ErrorCode;
  /** Whose fault it is (see ErrorFault); `environment` unless the thrower says otherwise. */
  readonly fault: ErrorFault;
  /** The file the error is about, when known (filled in by callers that read from disk). */
  file: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; file?: string; fault?: ErrorFault }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SignGateError';
    this.code = code;
    this.fault = options?.fault ?? 'environment';
    this.file = options?.file;
  }
}

/** True for an error that is one input file's own fault (see ErrorFault): a finding on that file, never a stopped run. */
export function isInputFault(error: unknown): error is SignGateError {
  return isSignGateError(error) && (error as SignGateError).fault === 'input';
}

/** Details of where a binary structure was malformed. */
export interface FormatErrorDetails {
  /** Human name of the structure, e.g. "COFF header" or "#Blob heap". */
  structure: string;
  /** File offset where the problem was found. */
  fileOffset: number;
  /** Bytes that were needed, for truncations. */
  needed?: number;
  /** Bytes that were available, for truncations. */
  available?: number;
}

/** The input bytes are not what the format requires: always the input's fault. */
export class FormatError extends SignGateError {
  readonly structure: string;
  readonly fileOffset: number;
  readonly needed: number | undefined;
  readonly available: number | undefined;

  constructor(code: ErrorCode, message: string, details: FormatErrorDetails, options?: { cause?: unknown }) {
    super(code, message, { ...options, fault: 'input' });
    this.name = 'FormatError';
    this.structure = details.structure;
    this.fileOffset = details.fileOffset;
    this.needed = details.needed;
    this.available = details.available;
  }
}

/** A key file or key does not fit the operation. */
export class KeyError extends SignGateError {
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; file?: string; fault?: ErrorFault }) {
    super(code, message, options);
    this.name = 'KeyError';
  }
}

/** The command line or configuration is wrong; `hint` says what to do. */
export class UsageError extends SignGateError {
  readonly hint: string | undefined;
  constructor(message: string, hint?: string, code: ErrorCode = 'SG_ERR_USAGE') {
    super(code, message);
    this.name = 'UsageError';
    this.hint = hint;
  }
}

/** The signing service could not be used: unreachable, timed out, an error status or an unexpected body. */
export class ServiceError extends SignGateError {
  readonly method: string;
  /** The request URL (never carries the token). */
  readonly url: string;
  readonly status: number | undefined;
  readonly title: string | undefined;
  readonly detail: string | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    request: { method: string; url: string; status?: number; title?: string; detail?: string },
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    this.name = 'ServiceError';
    this.method = request.method;
    this.url = request.url;
    this.status = request.status;
    this.title = request.title;
    this.detail = request.detail;
  }
}

/** Guard that works across realms and duplicate module copies. */
export function isSignGateError(value: unknown): value is SignGateError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    (value as { code: string }).code.startsWith('SG_ERR_')
  );
}

/** Formats a file offset the way every message does: 0x-prefixed hex. */
export function hex(value: number): string {
  return `0x${value.toString(16).toUpperCase()}`;
}
