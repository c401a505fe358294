// The service's answers are untrusted input: each is checked against a JSON Schema of what the client relies
// on (ajv, compiled on first use), and then normalised: ids of any JSON type become strings, file names use
// `/`, every text loses its control characters. Unknown fields are ignored, unknown states kept as they are.
// Each answer has a reader here (body and request in, the answer's type out), which the connection runs on the
// parsed body of its request (connection.ts).
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { ServiceError } from '../core/errors.js';
import { cleanServiceText } from './text.js';

const id = { type: ['string', 'number'], minLength: 1 } as const;
const text = { type: ['string', 'null'] } as const;

const schemas = {
  created: {
    type: 'object',
    properties: {
      id,
      comment: text,
      links: { type: 'object', properties: { status: { type: 'string' }, download: { type: 'string' }, delete: { type: 'string' } } },
    },
    anyOf: [{ required: ['id'] }, { required: ['links'], properties: { links: { required: ['status', 'download'] } } }],
  },
  status: {
    type: 'object',
    required: ['processingFinished', 'assemblies'],
    properties: {
      id,
      comment: text,
      createdAt: text,
      processingFinished: { type: 'boolean' },
      assemblies: {
        type: 'array',
        maxItems: 100_000,
        items: {
          type: 'object',
          required: ['fileName', 'fileProcessingState'],
          properties: {
            fileName: { type: 'string', minLength: 1 },
            fileProcessingState: { type: 'string' },
            messages: {
              type: ['array', 'null'],
              items: { type: 'object', properties: { dateTime: text, messageType: text, message: text } },
            },
          },
        },
      },
    },
  },
  list: {
    type: 'array',
    items: {
      type: 'object',
      required: ['id'],
      properties: { id, comment: text, createdAt: text, processingFinished: { type: ['boolean', 'null'] }, fileCount: { type: ['number', 'null'] } },
    },
  },
} as const;

type AnswerKind = keyof typeof schemas;
const compiled = new Map<AnswerKind, ValidateFunction>();

function describe(errors: readonly ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return 'it does not follow the API';
  const where = e.instancePath ? `at ${e.instancePath}` : 'at the top level';
  return `${where}: ${e.message ?? e.keyword}`;
}

/**
 * `value` with every object member whose value is null left out, at every depth: ASP.NET's default serializer
 * writes `null` for a field it has no value for (`"links": null`), which means the same as a missing field.
 */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}

/**
 * Checks `body` against what the client relies on for `kind`, a null field counting as a missing one; returns the
 * body without its null fields.
 * @throws ServiceError SG_ERR_HTTP_BAD_RESPONSE naming the request and the first thing that was wrong
 */
function assertAnswer(kind: AnswerKind, raw: unknown, request: { method: string; url: string }): unknown {
  const body = withoutNulls(raw);
  let validate = compiled.get(kind);
  if (!validate) {
    const { Ajv2020 } = createRequire(import.meta.url)('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
    validate = new Ajv2020({ allErrors: false, strict: false, allowUnionTypes: true }).compile(schemas[kind]);
    compiled.set(kind, validate);
  }
  if (!validate(body)) {
    throw new ServiceError(
      'SG_ERR_HTTP_BAD_RESPONSE',
      `${request.method} ${request.url}: the ${kind === 'created' ? 'upload answer' : kind === 'status' ? 'job status' : 'job list'} does not follow the API (${describe(validate.errors)})`,
      request,
    );
  }
  return body;
}

/** A job id as text, whatever JSON type the service used. */
function idText(value: unknown): string {
  return typeof value === 'number' ? String(value) : String(value ?? '');
}

/** A file name as the service reported it, with `/` as separator and control characters removed. */
function fileNameText(value: string): string {
  return cleanServiceText(value, 1000).replace(/\\/g, '/');
}

/** What an answer reader is told of its request, for its errors. */
export interface AnswerRequest {
  readonly method: string;
  readonly url: string;
}

/** Checks and normalises a parsed JSON answer (see ServiceConnection.json). */
export type AnswerReader<T> = (body: unknown, request: AnswerRequest) => T;

export interface JobMessage {
  readonly dateTime: string | null;
  readonly messageType: string;
  readonly message: string;
}

export interface JobFileStatus {
  /** Relative path with `/`, whatever separator the service used. */
  readonly fileName: string;
  /** As the service said it (`Signed`, `Success`, `Error`, …): states the client does not know are kept. */
  readonly fileProcessingState: string;
  readonly messages: readonly JobMessage[];
}

export interface JobStatus {
  readonly id: string | null;
  readonly comment: string | null;
  readonly createdAt: string | null;
  readonly processingFinished: boolean;
  readonly assemblies: readonly JobFileStatus[];
  /** signgate's extension: the job's signature record entries with inclusion proofs in a signed checkpoint (unchecked here: workflows/record-proof.ts checks it). */
  readonly signatureRecord?: unknown;
}

export interface JobSummary {
  readonly id: string;
  readonly comment: string | null;
  /** Null when the service does not say. */
  readonly createdAt: string | null;
  readonly processingFinished: boolean | null;
  readonly fileCount: number | null;
}

/** The answer to an upload as the service gave it: its id (as text) and links not yet held against the base URL. */
export interface CreatedAnswer {
  readonly id: string | undefined;
  readonly comment: string | null;
  readonly links: { readonly status?: string; readonly download?: string; readonly delete?: string };
}

/** One license entry of GET /licenses. */
export interface LicenseEntry {
  readonly optionId: number;
  /**
   * The option's public key token (16 lower-case hex digits) from the `publicKeyToken` field, signgate's extension:
   * null when the service does not report it, or reports something that is not a token (see `publicKeyTokenProblem`).
   */
  readonly publicKeyToken: string | null;
  /** What was wrong with a `publicKeyToken` the service sent (cleaned service text), when it was not a token. */
  readonly publicKeyTokenProblem?: string;
}

function badAnswer(request: AnswerRequest, what: string): ServiceError {
  return new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `${request.method} ${request.url}${what}`, request);
}

/** The answer to POST /assemblies. */
export const createdAnswer: AnswerReader<CreatedAnswer> = (body, request) => {
  const created = assertAnswer('created', body, request) as {
    id?: unknown;
    comment?: unknown;
    links?: { status?: string; download?: string; delete?: string };
  };
  return {
    id: created.id === undefined || created.id === null ? undefined : idText(created.id),
    comment: typeof created.comment === 'string' ? cleanServiceText(created.comment) : null,
    links: created.links ?? {},
  };
};

/** The answer to GET …/status. */
export const statusAnswer: AnswerReader<JobStatus> = (body, request) => {
  const s = assertAnswer('status', body, request) as {
    id?: unknown;
    comment?: unknown;
    createdAt?: unknown;
    processingFinished: boolean;
    assemblies: { fileName: string; fileProcessingState: string; messages?: { dateTime?: unknown; messageType?: unknown; message?: unknown }[] | null }[];
    signatureRecord?: unknown;
  };
  return {
    id: s.id === undefined || s.id === null ? null : idText(s.id),
    comment: typeof s.comment === 'string' ? cleanServiceText(s.comment) : null,
    createdAt: typeof s.createdAt === 'string' ? cleanServiceText(s.createdAt, 100) : null,
    processingFinished: s.processingFinished,
    ...(s.signatureRecord !== undefined ? { signatureRecord: s.signatureRecord } : {}),
    assemblies: s.assemblies.map((a) => ({
      fileName: fileNameText(a.fileName),
      fileProcessingState: cleanServiceText(a.fileProcessingState, 100) || '(none)',
      messages: (a.messages ?? []).map((m) => ({
        dateTime: typeof m.dateTime === 'string' ? cleanServiceText(m.dateTime, 100) : null,
        messageType: typeof m.messageType === 'string' ? cleanServiceText(m.messageType, 100) : 'Info',
        message: typeof m.message === 'string' ? cleanServiceText(m.message) : '',
      })),
    })),
  };
};

/** The answer to GET /assemblies. */
export const listAnswer: AnswerReader<JobSummary[]> = (body, request) =>
  (
    assertAnswer('list', body, request) as {
      id: unknown;
      comment?: unknown;
      createdAt?: unknown;
      processingFinished?: unknown;
      fileCount?: unknown;
    }[]
  ).map((j) => ({
    id: idText(j.id),
    comment: typeof j.comment === 'string' ? cleanServiceText(j.comment, 200) : null,
    createdAt: typeof j.createdAt === 'string' ? cleanServiceText(j.createdAt, 100) : null,
    processingFinished: typeof j.processingFinished === 'boolean' ? j.processingFinished : null,
    fileCount: typeof j.fileCount === 'number' ? j.fileCount : null,
  }));

/**
 * The answer to GET /licenses: each option id (a number or a numeric string), and its public key token when the
 * service reports one. A `publicKeyToken` that is not 16 hex digits is no token (null, with the problem said): it
 * never fails the call.
 */
export const licenseEntriesAnswer: AnswerReader<LicenseEntry[]> = (body, request) => {
  if (!Array.isArray(body)) throw badAnswer(request, ` returned ${typeof body}, not a JSON array of license entries`);
  return body.map((entry, i) => {
    const raw = (entry as { optionId?: unknown } | null)?.optionId;
    const id = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(id)) throw badAnswer(request, `: license entry ${i} has optionId ${JSON.stringify(raw)}, not a number`);
    return { optionId: id, ...keyTokenOf((entry as { publicKeyToken?: unknown }).publicKeyToken) };
  });
};

/** A `publicKeyToken` field as the client takes it: 16 hex digits (any case) are the token; anything else is none. */
function keyTokenOf(raw: unknown): Pick<LicenseEntry, 'publicKeyToken' | 'publicKeyTokenProblem'> {
  if (raw === undefined || raw === null) return { publicKeyToken: null };
  if (typeof raw === 'string' && /^[0-9a-f]{16}$/i.test(raw)) return { publicKeyToken: raw.toLowerCase() };
  const shown = cleanServiceText(typeof raw === 'string' ? JSON.stringify(raw) : String(JSON.stringify(raw) ?? typeof raw), 60);
  return { publicKeyToken: null, publicKeyTokenProblem: `publicKeyToken ${shown} is not 16 hex digits` };
}

/** The answer to GET /record/public-key: the record key's public half, as the service gives it. */
export const recordKeyAnswer: AnswerReader<string> = (body, request) => {
  const key = (body as { publicKey?: unknown } | null)?.publicKey;
  if (typeof key !== 'string') throw badAnswer(request, ': the answer has no publicKey');
  return key;
};

/** The answer to GET /record/consistency: the proof's base64 hashes. */
export const consistencyAnswer: AnswerReader<string[]> = (body, request) => {
  const proof = (body as { proof?: unknown } | null)?.proof;
  if (!Array.isArray(proof) || proof.some((p) => typeof p !== 'string')) throw badAnswer(request, ': the answer has no proof (a list of base64 hashes)');
  return proof as string[];
};
