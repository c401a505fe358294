// The signature record as a Merkle log: GET /record/checkpoint, /record/consistency and /record/public-key.
import type { FastifyInstance } from 'fastify';
import { formatVerifierKey } from '../../../record/checkpoint.js';
import { HttpProblem } from '../../problem.js';
import { ENTRY_FIELDS } from '../../../record/signature-record.js';
import { problems } from './shared-schemas.js';
import type { RouteContext } from './context.js';

const base64Hash = { type: 'string', pattern: '^[A-Za-z0-9+/]{43}=$', description: 'A SHA-256 hash, base64' } as const;

const EXAMPLE_CHECKPOINT = 'signgate-record-3f9a61c2\n1234\n7PBHL/kW3mfqbYtcnqWd1ZCq6GKwjxMBjrP7o7ACVIc=\n\n\u2014 signgate-record-3f9a61c2 Mjq1c0…\n';

/** Extension field of JobStatus: absent while the job is processing and for a job whose files got no entry. */
export const signatureRecordProof = {
  title: 'SignatureRecordProof',
  type: 'object',
  description:
    'Extension of signgate: the signature record entries of the files this job signed, each with its RFC 9162 inclusion proof in the tree of `checkpoint` (a C2SP signed note: origin, tree size, base64 root hash, blank line, signature line, signed with the record key of GET /record/public-key). A client keeps the latest checkpoint and asks for GET /record/consistency between it and the next one.',
  required: ['checkpoint', 'entries'],
  properties: {
    checkpoint: { type: 'string' },
    entries: {
      type: 'array',
      items: {
        title: 'SignatureRecordInclusion',
        type: 'object',
        required: ['entry', 'leafIndex', 'inclusionProof'],
        properties: {
          entry: {
            title: 'SignatureRecordEntry',
            type: 'object',
            description:
              'The entry as the record holds it; its leaf hash is SHA-256(0x00 || the entry as one JSON line, fields in this order, without the newline)',
            required: [...ENTRY_FIELDS, 'hash'],
            properties: {
              seq: { type: 'integer' },
              time: { type: 'string' },
              organization: { type: 'string' },
              user: { type: 'string' },
              tokenId: { type: ['string', 'null'] },
              job: { type: 'string' },
              file: { type: 'string' },
              uploadedSha256: { type: 'string' },
              signedSha256: { type: 'string' },
              optionId: { type: 'integer' },
              keyToken: { type: 'string' },
              keyLocation: { type: 'string' },
              prev: { type: 'string' },
              hash: { type: 'string' },
            },
          },
          leafIndex: { type: 'integer', description: 'seq - 1' },
          inclusionProof: { type: 'array', items: base64Hash },
        },
      },
    },
  },
} as const;

const checkpointRouteBase = {
  operationId: 'getRecordCheckpoint',
  tags: ['record'],
  summary: "The signature record's latest checkpoint, signed with the service's record key",
  response: {
    200: {
      description: 'The checkpoint as a C2SP signed note, and its tree size',
      title: 'RecordCheckpoint',
      type: 'object',
      required: ['checkpoint', 'size'],
      properties: { checkpoint: { type: 'string' }, size: { type: 'integer' } },
      examples: [{ checkpoint: EXAMPLE_CHECKPOINT, size: 1234 }],
    },
  },
} as const;

const consistencyRouteBase = {
  operationId: 'getRecordConsistency',
  tags: ['record'],
  summary: 'The RFC 9162 consistency proof between two sizes of the signature record',
  querystring: {
    type: 'object',
    required: ['from', 'to'],
    properties: { from: { type: 'integer', minimum: 0 }, to: { type: 'integer', minimum: 0 } },
  },
  response: {
    200: {
      description: 'The proof that the tree of `to` entries continues the tree of `from` entries (empty when from is 0 or equals to)',
      title: 'RecordConsistency',
      type: 'object',
      required: ['from', 'to', 'proof'],
      properties: { from: { type: 'integer' }, to: { type: 'integer' }, proof: { type: 'array', items: base64Hash } },
      examples: [
        {
          from: 6,
          to: 8,
          proof: [
            'DrxdNDf74tsVi58Sah0RjjCBgQMdCpSfje3t68VY72o=',
            'yoVOoSjtBQtBs1/8G4e46yveRh6eO1WW7Oa51ZdaCuA=',
            '037kGJdt2VdTwcc4Yrk5j6Kiz5tP8P3+izDNlSCWFLc=',
          ],
        },
      ],
    },
  },
} as const;

const recordPublicKeyRouteBase = {
  operationId: 'getRecordPublicKey',
  tags: ['record'],
  summary: "The record key's public half, as a C2SP verifier key (name+keyid+base64 key)",
  response: {
    200: {
      description: 'The verifier key of the checkpoints',
      title: 'RecordPublicKey',
      type: 'object',
      required: ['publicKey'],
      properties: { publicKey: { type: 'string' } },
      examples: [{ publicKey: 'signgate-record-3f9a61c2+5c1e0a7b+AeWq…' }],
    },
  },
} as const;

const checkpointRoute = { ...checkpointRouteBase, response: { ...checkpointRouteBase.response, ...problems(401, 403) } } as const;

const consistencyRoute = { ...consistencyRouteBase, response: { ...consistencyRouteBase.response, ...problems(400, 401, 403) } } as const;

const recordPublicKeyRoute = { ...recordPublicKeyRouteBase, response: { ...recordPublicKeyRouteBase.response, ...problems(401, 403) } } as const;

export function registerRecordRoutes(api: FastifyInstance, ctx: Pick<RouteContext, 'recordLog'>): void {
  const recordLog = ctx.recordLog;
  api.get('/record/checkpoint', { schema: checkpointRoute }, async () => {
    await recordLog!.refresh();
    const size = recordLog!.size;
    return { checkpoint: await recordLog!.checkpoint(), size };
  });

  api.get<{ Querystring: { from: number; to: number } }>('/record/consistency', { schema: consistencyRoute }, async (request) => {
    const { from, to } = request.query;
    if (to > recordLog!.size) await recordLog!.refresh();
    if (from > to || to > recordLog!.size) {
      throw new HttpProblem(
        400,
        'Bad Request',
        `No consistency proof from ${from} to ${to} entries: the record holds ${recordLog!.size}, and from must not exceed to.`,
      );
    }
    return { from, to, proof: await recordLog!.consistency(from, to) };
  });

  api.get('/record/public-key', { schema: recordPublicKeyRoute }, async () => ({ publicKey: formatVerifierKey(recordLog!.key.verifier) }));
}
