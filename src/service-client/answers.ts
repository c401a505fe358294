// The service's answers are untrusted input: each is checked against a JSON Schema of what the client relies
// on (ajv, compiled on first use), and then normalised: ids of any JSON type become strings, file names use
// `/`, every text loses its control characters. Unknown fields are ignored, unknown states kept as they are.
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
export function assertAnswer(kind: AnswerKind, raw: unknown, request: { method: string; url: string }): unknown {
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
export function idText(value: unknown): string {
  return typeof value === 'number' ? String(value) : String(value ?? '');
}

/** A file name as the service reported it, with `/` as separator and control characters removed. */
export function fileNameText(value: string): string {
  return cleanServiceText(value, 1000).replace(/\\/g, '/');
}

export { cleanServiceText };
