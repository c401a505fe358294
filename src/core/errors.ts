// The error hierarchy: one base class with a stable code, a few subclasses split by who can act on them.
import type { ErrorCode } from './error-codes.js';

/** Base of every error signgate throws on purpose. `code` is stable and listed in docs/errors.md. */
export class SignGateError extends Error {
  readonly code: ErrorCode;
  /** The file the error is about, when known (filled in by callers that read from disk). */
  file: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; file?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SignGateError';
    this.code = code;
    this.file = options?.file;
  }
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

/** The input bytes are not what the format requires. */
export class FormatError extends SignGateError {
  readonly structure: string;
  readonly fileOffset: number;
  readonly needed: number | undefined;
  readonly available: number | undefined;

  constructor(code: ErrorCode, message: string, details: FormatErrorDetails, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'FormatError';
    this.structure = details.structure;
    this.fileOffset = details.fileOffset;
    this.needed = details.needed;
    this.available = details.available;
  }
}

/** A key file or key does not fit the operation. */
export class KeyError extends SignGateError {
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; file?: string }) {
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
