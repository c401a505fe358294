// The archive path: one ZIP of a project's files in, one ZIP back with every file at its path (assemblies signed
// where signing succeeded), the signing log, and a log per file under signing-logs/. The archive is extracted
// all-or-nothing with the checks of the client's extraction (src/zip): no entry outside the job, no links, no
// encrypted entries, caps on entries, expanded size and compression ratio; names as uploads are checked. The
// assemblies inside (*.dll, *.exe, *.netmodule) become an ordinary job under the ordinary limits, processed by
// the same worker; every other file (nested archives included) is kept as it came and returned unchanged.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ARCHIVE_ASSEMBLY, archiveNameProblems, archiveZipLimits, PER_FILE_LOGS } from '../../../zip/archive-rules.js';
import { readZip, ZipRefusal, type ZipFileEntry } from '../../../zip/read-zip.js';
import type { ZipEntry } from '../../../zip/write-zip.js';
import { writeZipFile } from '../../zip-file.js';
import type { PendingJob } from '../../ports.js';
import type { JobRecord } from '../../domain/job.js';
import type { JobStateStore } from '../../ports.js';
import type { ServerConfig } from '../../server-config.js';
import { guardBody, UPLOAD_ENVELOPE_BYTES } from '../body-guard.js';
import { jobOf, type RouteContext } from './context.js';
import { commentOf } from '../error-response.js';
import { HttpProblem } from '../../problem.js';
import { acceptance } from '../../jobs/key-rotation.js';
import { SIGNING_LOG } from '../../../core/upload-names.js';
import { ARCHIVE_FILES, ARCHIVE_MANIFEST, ARCHIVE_RESULT, DEFAULT_RESULT_FILE, UPLOADS_FOLDER } from '../../domain/job-folder.js';
import { EXAMPLE_JOB_ID, jobCreatedExample, jobLinks, problemResponse } from './shared-schemas.js';
import { mkdirPrivate, PRIVATE_FILE } from '../../fs-atomic.js';

interface ArchiveManifest {
  readonly files: readonly { readonly name: string; readonly assembly: boolean; readonly size: number; readonly sha256: string }[];
}

const tooLarge = (what: string, max: number) =>
  new HttpProblem(413, 'Archive too large', `${what} exceeds ${max} bytes, the most one job may hold. Split the project into several archives.`);

/** The problem a refused archive is answered with: the reason in the title, the entry in the detail. */
function refusal(error: ZipRefusal, file: string): HttpProblem {
  const detail = `${file}: ${error.message}.`;
  switch (error.reason) {
    case 'encrypted':
      return new HttpProblem(400, 'Encrypted archive', `${detail} Zip the files again without a password; the service cannot read encrypted archives.`);
    case 'not-zip':
      return new HttpProblem(400, 'Not a ZIP archive', `${detail} Send a ZIP archive (.zip) of the project's files.`);
    case 'too-large':
    case 'too-many-entries':
    case 'ratio':
      return new HttpProblem(413, 'Archive refused', `${detail} Split the project into smaller archives.`);
    default:
      return new HttpProblem(400, 'Unsafe archive', `${detail} Zip the files again from the project's folder: relative paths only, no links.`);
  }
}

/**
 * Reads the archive part of a multipart upload into memory, counting bytes; the comment may come before or after it.
 * The whole body is guarded as on POST /assemblies: every byte counts toward the limit, and a stalled body gets 408.
 */
async function receiveArchive(
  request: FastifyRequest,
  maxBytes: number,
  envelopeBytes: number,
  idleMs: number,
): Promise<{ bytes: Buffer; fileName: string; comment: string | null }> {
  let archive: { bytes: Buffer; fileName: string } | undefined;
  let comment: string | null = null;
  const parts = request.parts()[Symbol.asyncIterator]();
  // The first next() pipes the request into busboy; the guard listens beside it from the same tick on.
  const first = parts.next();
  const release = guardBody(request, maxBytes + envelopeBytes, idleMs, () => tooLarge('The archive', maxBytes));
  try {
    for (let result = await first; !result.done; result = await parts.next()) {
      const part = result.value;
      if (part.type === 'field') {
        if (part.fieldname === 'comment') comment = commentOf(part.value, 1000);
        continue;
      }
      if (archive) {
        part.file.resume();
        throw new HttpProblem(400, 'One archive per job', 'Send exactly one file part, the ZIP archive; upload further archives as jobs of their own.');
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of part.file as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) throw tooLarge('The archive', maxBytes);
        chunks.push(chunk);
      }
      if ((part.file as { truncated?: boolean }).truncated) throw tooLarge('The archive', maxBytes);
      archive = { bytes: Buffer.concat(chunks), fileName: part.filename || 'archive.zip' };
    }
  } finally {
    release();
  }
  if (!archive) throw new HttpProblem(400, 'No archive', 'The upload holds no file part. Send the ZIP archive as the part "archive".');
  return { ...archive, comment };
}

/**
 * Archives extracted at once, per process. Each extraction holds at most its archive's inflated size in memory
 * (2 × maxUploadBytes, which the reader enforces from the sizes the entries declare): two at once bound what
 * any number of concurrent archive uploads can take; the others wait their turn.
 */
export const MAX_CONCURRENT_EXTRACTIONS = 2;
let extracting = 0;
const waiting: (() => void)[] = [];

async function oneOfFewExtractions<T>(work: () => Promise<T>): Promise<T> {
  if (extracting >= MAX_CONCURRENT_EXTRACTIONS) await new Promise<void>((resolve) => waiting.push(resolve));
  else extracting++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else extracting--;
  }
}

/** Extracts and checks the archive, and writes its files into the pending job; returns what the job record needs. */
async function unpack(
  archive: { bytes: Buffer; fileName: string },
  pending: PendingJob,
  config: ServerConfig,
): Promise<{ assemblies: { fileName: string; size: number; sha256: string }[] }> {
  let entries: ZipFileEntry[];
  try {
    entries = await readZip(archive.bytes, archiveZipLimits(config.maxUploadBytes));
  } catch (error) {
    if (error instanceof ZipRefusal) throw refusal(error, archive.fileName);
    throw error;
  }
  const nameErrors = archiveNameProblems(entries);
  if (nameErrors.length)
    throw new HttpProblem(
      400,
      'Bad file names',
      `${nameErrors.length} file name(s) in ${archive.fileName} cannot be accepted; nothing was stored.`,
      nameErrors,
    );
  const names = entries.map((e) => e.name.replace(/\\/g, '/'));
  const isAssembly = names.map((n) => ARCHIVE_ASSEMBLY.test(n));
  const assemblyCount = isAssembly.filter(Boolean).length;
  if (assemblyCount === 0)
    throw new HttpProblem(400, 'No assemblies', `${archive.fileName} holds no .dll, .exe or .netmodule file, so there is nothing to sign.`);
  if (assemblyCount > config.maxFilesPerJob)
    throw new HttpProblem(
      413,
      'Archive too large',
      `${archive.fileName} holds ${assemblyCount} assemblies, more than the ${config.maxFilesPerJob} one job may hold. Split it.`,
    );
  const assemblyBytes = entries.reduce((n, e, i) => n + (isAssembly[i] ? e.bytes.length : 0), 0);
  if (assemblyBytes > config.maxUploadBytes) throw tooLarge(`The assemblies in ${archive.fileName} (${assemblyBytes} bytes)`, config.maxUploadBytes);
  const manifest: ArchiveManifest = {
    files: entries.map((e, i) => ({
      name: names[i]!,
      assembly: isAssembly[i]!,
      size: e.bytes.length,
      sha256: createHash('sha256').update(e.bytes).digest('hex'),
    })),
  };
  for (const [i, e] of entries.entries()) {
    // The pending folder is the service's own temporary folder; every name was checked above.
    const target = join(isAssembly[i] ? pending.uploadsDir : join(pending.dir, ARCHIVE_FILES), ...names[i]!.split('/'));
    await mkdirPrivate(dirname(target));
    await writeFile(target, e.bytes, { flag: 'wx', mode: PRIVATE_FILE });
  }
  await writeFile(join(pending.dir, ARCHIVE_MANIFEST), JSON.stringify(manifest), { mode: PRIVATE_FILE });
  return { assemblies: manifest.files.filter((f) => f.assembly).map((f) => ({ fileName: f.name, size: f.size, sha256: f.sha256 })) };
}

/** The log of one file, as the returned archive holds it under signing-logs/. */
function fileLog(record: JobRecord, file: ArchiveManifest['files'][number]): string {
  const job = record.assemblies.find((a) => a.fileName === file.name);
  const lines = [`${file.name}: ${job ? job.fileProcessingState : 'Returned unchanged'}`];
  if (job) for (const m of job.messages) lines.push(`${m.dateTime} ${m.messageType}: ${m.message}`);
  else lines.push('Not an assembly (.dll, .exe, .netmodule): returned as it was uploaded.');
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Builds the returned archive from the job's result package, the other files and the per-file logs, once per node:
 * the job's files are read through the store (the data directory, or the bucket on nodes that share no folder),
 * and the archive is kept in this node's folder for the job.
 */
async function resultArchive(store: JobStateStore, record: JobRecord, manifest: ArchiveManifest): Promise<string> {
  const dir = store.files.folder(record.organization, record.id);
  const target = join(dir, ARCHIVE_RESULT);
  if (existsSync(target)) return target;
  const resultBytes = await store.files.read(record, record.resultFile ?? DEFAULT_RESULT_FILE);
  if (!resultBytes) throw new HttpProblem(500, 'Result missing', `The result package of job ${record.id} is missing.`);
  const result = new Map((await readZip(resultBytes)).map((e) => [e.name, e.bytes]));
  const entries: ZipEntry[] = [];
  for (const f of manifest.files) {
    const bytes = (f.assembly ? result.get(f.name) : undefined) ?? (await store.files.read(record, `${f.assembly ? UPLOADS_FOLDER : ARCHIVE_FILES}/${f.name}`));
    if (!bytes) throw new HttpProblem(500, 'File missing', `The file ${f.name} of job ${record.id} is missing from its storage.`);
    entries.push({ name: f.name, source: { bytes } });
  }
  const log = result.get(SIGNING_LOG);
  if (log) entries.push({ name: SIGNING_LOG, source: { bytes: log } });
  for (const f of manifest.files) entries.push({ name: `${PER_FILE_LOGS}/${f.name}.log`, source: { bytes: new TextEncoder().encode(fileLog(record, f)) } });
  await mkdirPrivate(dir);
  await writeZipFile(target, entries);
  return target;
}

/** The body of POST /archives as the OpenAPI document shows it (the route reads it as a multipart stream). */
export const archiveBody = {
  type: 'object',
  required: ['archive'],
  description: 'The ZIP archive of the project (not password-protected), as the part "archive"; optional comment.',
  properties: { archive: { type: 'string', format: 'binary' }, comment: { type: 'string', description: 'Optional comment shown with the job' } },
  // The archive part carries the ZIP's bytes; its file name is only informative.
  examples: [{ archive: 'MyAddin-1.4.zip', comment: 'Release 1.4.0' }],
} as const;

const archiveUploadRoute = {
  operationId: 'uploadArchive',
  tags: ['archives'],
  summary: 'Upload a ZIP archive of the project; its assemblies are signed as one job',
  description:
    'The archive is extracted safely (no entry outside the job, no links, no encrypted entries, at most 5000 entries, expanded size at most twice the upload limit, compression ratio at most 100 for entries of 64 KiB or more; nested archives are left as they are). Its *.dll, *.exe and *.netmodule files are a job under the limits of POST /assemblies; poll /assemblies/{id}/status, then download /archives/{id}.',
  consumes: ['multipart/form-data'],
  response: {
    201: {
      description: 'The job was created; poll its status, then download the result archive',
      type: 'object',
      required: ['id', 'links'],
      properties: { id: { type: 'string' }, comment: { type: ['string', 'null'] }, links: jobLinks },
      examples: [jobCreatedExample('archives')],
    },
    400: problemResponse(
      400,
      'Not a ZIP, encrypted (title "Encrypted archive"), unsafe entries (paths outside the job, links), bad or reserved names, or no assembly inside',
      {
        type: 'about:blank',
        title: 'Encrypted archive',
        status: 400,
        detail: 'The entry bin/Contoso.Addin.dll is password-protected. Zip the files again without a password.',
      },
    ),
    401: problemResponse(401, 'No valid token'),
    403: problemResponse(403, 'The user lacks the role User, or the organization holds no license'),
    409: problemResponse(409, 'Job limit reached'),
    413: problemResponse(413, "The archive, its expanded size, its entry count, an entry's compression ratio, or the assemblies inside exceed the limits", {
      type: 'about:blank',
      title: 'Archive too large',
      status: 413,
      detail: 'The archive expands to more than 80000000 bytes, twice the upload limit. Split the project into several archives.',
    }),
    429: problemResponse(429, 'Too many requests; wait the seconds given in Retry-After'),
  },
} as const;

const archiveDownloadRoute = {
  operationId: 'downloadArchiveResult',
  tags: ['archives'],
  summary: 'The result archive: every file at its path, signed where signing succeeded, signing-log.txt and signing-logs/<path>.log per file',
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
  response: {
    200: { description: 'The result archive', content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } } },
    401: problemResponse(401, 'No valid token'),
    403: problemResponse(403, 'The user lacks the role User'),
    404: problemResponse(404, 'No such job in your organization, or the job was not uploaded as an archive', {
      type: 'about:blank',
      title: 'Not an archive job',
      status: 404,
      detail: `Job ${EXAMPLE_JOB_ID} was uploaded as files, not as an archive; download it from /assemblies/${EXAMPLE_JOB_ID}.`,
    }),
    409: problemResponse(409, 'The job is still being processed'),
    429: problemResponse(429, 'Too many requests; wait the seconds given in Retry-After'),
  },
} as const;

/** Registers POST /archives and GET /archives/{id} on the authenticated API instance. */
export function registerArchiveRoutes(api: FastifyInstance, ctx: RouteContext): void {
  api.post('/archives', { schema: archiveUploadRoute }, async (request, reply) => {
    const org = request.principal!.organization;
    const config = ctx.config();
    if (org.licenses.length === 0) throw new HttpProblem(403, 'Forbidden', `The organization ${org.id} holds no license option, so nothing can be signed.`);
    if (!request.isMultipart()) throw new HttpProblem(400, 'Bad Request', 'Send the archive as multipart/form-data, in the part "archive".');
    if (Number(request.headers['content-length'] ?? 0) > config.maxUploadBytes + UPLOAD_ENVELOPE_BYTES) throw tooLarge('The archive', config.maxUploadBytes);
    const pending: PendingJob | undefined = await ctx.store.reserve(org.id, config.maxJobsPerOrganization);
    if (!pending) {
      throw new HttpProblem(
        409,
        'Job limit reached',
        `The organization keeps ${config.maxJobsPerOrganization} jobs, the most it may keep. Delete finished jobs, then upload again.`,
      );
    }
    try {
      const archive = await receiveArchive(request, config.maxUploadBytes, UPLOAD_ENVELOPE_BYTES, ctx.idleMs);
      const { assemblies } = await oneOfFewExtractions(() => unpack(archive, pending, config));
      const record: JobRecord = {
        id: pending.id,
        organization: org.id,
        comment: archive.comment,
        createdAt: ctx.now().toISOString(),
        processingFinished: false,
        assemblies: assemblies.map((f) => ({ ...f, fileProcessingState: 'Pending', messages: [] })),
        ...acceptance(request.principal!),
      };
      await ctx.store.commit(pending, record);
      request.log.info({ job: record.id, organization: org.id, files: assemblies.length, bytes: archive.bytes.length }, 'archive job accepted');
      ctx.worker.enqueue(org.id, record.id);
      const base = `${request.protocol}://${request.host}${ctx.apiPrefix}`;
      return reply.status(201).send({
        id: record.id,
        comment: record.comment,
        links: { status: `${base}/assemblies/${record.id}/status`, download: `${base}/archives/${record.id}`, delete: `${base}/assemblies/${record.id}` },
      });
    } catch (error) {
      await ctx.store.abandon(pending);
      throw error;
    }
  });

  api.get<{ Params: { id: string } }>('/archives/:id', { schema: archiveDownloadRoute }, async (request, reply) => {
    const record = await jobOf(ctx, request);
    const manifestBytes = await ctx.store.files.read(record, ARCHIVE_MANIFEST);
    if (!manifestBytes) {
      throw new HttpProblem(404, 'Not an archive job', `Job ${record.id} was uploaded as files, not as an archive; download it from /assemblies/${record.id}.`);
    }
    if (!record.processingFinished)
      throw new HttpProblem(409, 'Not ready', `Job ${record.id} is still being processed; poll its status until processingFinished is true.`);
    const path = await resultArchive(ctx.store, record, JSON.parse(manifestBytes.toString('utf8')) as ArchiveManifest);
    return reply.type('application/zip').header('content-disposition', `attachment; filename="${record.id}.zip"`).send(createReadStream(path));
  });
}
