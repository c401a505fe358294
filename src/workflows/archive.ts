// The archive path as a library: pack() writes the ZIP of a build output a user would otherwise zip by hand, after
// the pre-flight check; signArchive() checks the assemblies inside, uploads the archive to POST /archives, waits,
// downloads the result archive (every file at its path, signing-log.txt, signing-logs/<path>.log) and verifies
// every assembly the service says it signed.
import { ClientFileState, isSignedState } from '../core/file-states.js';
import { closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { ServiceError, UsageError } from '../core/errors.js';
import { secretFile, SECRET_SCAN_BYTES, type SecretFile } from '../core/secret-files.js';
import { SIGNING_LOG } from '../core/upload-names.js';
import type { CheckResult } from '../rules/rule-runner.js';
import { inThisThread, runEngine } from '../engine/index.js';
import { checkProduct } from '../rules/check-product.js';
import type { CheckInput } from '../rules/types.js';
import { createServiceClient } from '../service-client/client.js';
import { ARCHIVE_ASSEMBLY, archiveNameProblems, archiveZipLimits, PER_FILE_LOGS } from '../zip/archive-rules.js';
import { readZip, ZipRefusal, type ZipFileEntry, type ZipLimits } from '../zip/read-zip.js';
import { readRecordPublicKey } from './keys.js';
import { prepareCheck, prepareSettings, withDeclaredVendorAttributes, type CheckOptions } from './pipeline/index.js';
import { downloadTo, readInputFile, writeZipFile, zipEntryOfFile } from './files.js';
import { displayPath, expandInputs, fileIdentity } from './input-paths.js';
import { windowsPathKey } from '../core/windows-names.js';
import { checkReturnedFile } from './returned-file.js';
import { pollJob, type SignEvents } from './sign-job.js';
import { Ledger, makeCacheDir } from './ledger.js';
import { resolveAccessToken } from './access-token.js';
import { bindRecordToFiles, checkRecordProof, describeRecordCheck } from './record-proof.js';
import { createHash } from 'node:crypto';
import { clientOptions } from './client-options.js';

export interface PackOptions extends CheckOptions {
  /** The archive to write (a temporary file, then renamed). */
  readonly archive: string;
  /** Run the pre-flight check first and write nothing on errors (default true). */
  readonly check?: boolean;
  /** Pack files that look like tokens anyway (never a private key). */
  readonly force?: boolean;
}

export interface PackResult {
  readonly archive: string;
  /** Names in the archive, relative to the root (`/`). */
  readonly files: readonly string[];
  readonly check: CheckResult;
  /** True when the check found errors and nothing was written. */
  readonly stoppedByCheck: boolean;
}

/**
 * Runs the pre-flight check over the inputs and writes the archive of every file below them: a folder's files at
 * their paths relative to `root` (default the folder), a file named directly by its name (or path below `root`).
 * @throws UsageError when the archive would be inside an input folder, or two files get one name
 */
export async function pack(options: PackOptions): Promise<PackResult> {
  const prepared = await prepareCheck(options);
  const check = await runEngine(checkProduct({ settings: prepared.settings, severities: prepared.severities }), prepared.inputs, inThisThread());
  const archive = resolve(options.archive);
  if ((options.check ?? true) && check.summary.errors > 0) return { archive, files: [], check, stoppedByCheck: true };
  // The inputs as the check read them (from the command line or the config file): a folder stands for every file
  // below it (not only assemblies: the archive is the whole output; dot-files and dot-folders left out).
  const root = prepared.root ?? undefined;
  // Windows compares names ignoring case: two files that differ only in case would be one file there.
  const entries = new Map<string, { name: string; path: string }>();
  for (const input of prepared.paths) {
    const absolute = resolve(input);
    const folder = statSync(absolute, { throwIfNoEntry: false })?.isDirectory() ?? false;
    for (const { absolutePath: file } of await expandInputs([input], process.cwd(), { everyFile: true })) {
      if (file === archive) continue;
      const base = root ?? (folder ? absolute : dirname(file));
      const rel = relative(base, file);
      if (rel.startsWith('..'))
        throw new UsageError(
          `${displayPath(file)} is outside the root folder ${displayPath(base)}`,
          'Pass a --root that contains every input, or leave --root out.',
        );
      const name = rel.split(sep).join('/');
      const earlier = entries.get(windowsPathKey(name));
      if (earlier && fileIdentity(earlier.path) !== fileIdentity(file))
        throw new UsageError(
          `${displayPath(file)} and ${displayPath(earlier.path)} would both be ${name} in the archive`,
          'Pack them into separate archives, or pass --root so that their folders keep them apart.',
        );
      entries.set(windowsPathKey(name), { name, path: file });
    }
  }
  const named = [...entries.values()];
  refuseSecretFiles(
    named.map((e) => secretFile(displayPath(e.path), readHead(e.path))),
    options.force === true,
    'Leave it out of the folder you pack (or pack the files you ship by name), and keep keys and tokens outside the build output',
  );
  mkdirSync(dirname(archive), { recursive: true });
  await writeZipFile(
    archive,
    named.map((e) => zipEntryOfFile(e.name, e.path)),
  );
  return { archive, files: named.map((e) => e.name), check, stoppedByCheck: false };
}

export interface SignArchiveOptions extends Omit<CheckOptions, 'paths'> {
  /** The ZIP archive of the project. */
  readonly archive: string;
  /** Where the result archive goes: a `.zip` path, or a folder (default ./signed) that gets `<name>-signed.zip`. */
  readonly destination?: string;
  readonly comment?: string;
  readonly deleteAfterwards?: boolean;
  /** Check the assemblies inside before the upload and stop on errors (default true). */
  readonly check?: boolean;
  readonly timeoutS?: number;
  readonly pollIntervalMs?: number;
  /** Upload files that look like tokens anyway (never a private key). */
  readonly force?: boolean;
  /** The service's record key, expected up front (SignOptions.recordKey). */
  readonly recordKey?: string;
}

export interface ArchiveFileResult {
  readonly name: string;
  /** The service's state, or `not an assembly` for files returned as they were. */
  readonly state: string;
  /** For a file the service signed: signed with the organization's key and otherwise unchanged. */
  readonly verified: boolean;
  readonly reason: string | null;
  /** It fails the run: a file to sign that did not come back signed, or any file that came back changed or not at all. */
  readonly failed: boolean;
}

export interface SignArchiveResult {
  readonly jobId: string | null;
  readonly output: string | null;
  readonly files: readonly ArchiveFileResult[];
  /** Files of the result archive that were never sent (left out of the output); each counts as a failure. */
  readonly extras?: readonly string[];
  readonly check: CheckResult;
  readonly stoppedByCheck: boolean;
  readonly deleted: boolean;
  readonly summary: { readonly files: number; readonly assemblies: number; readonly signed: number; readonly verified: number; readonly failed: number };
}

/** The entries of an archive; `limits` are the service's for uploads (a result archive is read with the defaults). */
async function readArchive(path: string, bytes: Uint8Array, limits?: ZipLimits): Promise<ZipFileEntry[]> {
  try {
    return await readZip(bytes, limits);
  } catch (error) {
    if (error instanceof ZipRefusal)
      throw new UsageError(
        `${displayPath(path)}: ${error.message.replace(/package/g, 'archive')}`,
        'The service refuses such an archive too: zip the files again from the build output (signgate pack does), without a password.',
      );
    throw error;
  }
}

/**
 * The archive round trip.
 * @throws UsageError for bad options or an archive the service would refuse; ServiceError SG_ERR_HTTP_*
 */
export async function signArchive(options: SignArchiveOptions, events: SignEvents = {}): Promise<SignArchiveResult> {
  const archive = resolve(options.archive);
  const expectedKey = options.recordKey === undefined ? undefined : readRecordPublicKey(options.recordKey);
  // The settings come from the options and the configuration; the archive's assemblies are the inputs.
  const prepared = prepareSettings(options);
  const { baseUrl } = prepared;
  const token = resolveAccessToken(options);
  const settings = withDeclaredVendorAttributes(prepared.settings, prepared.references);
  if (!baseUrl || !token)
    throw new UsageError(
      'sign --archive needs the service address and an access token',
      'Pass --base-url and --access-token-file, or set SIGNGATE_BASE_URL and SIGNGATE_ACCESS_TOKEN.',
    );
  // Refused here by the rules the service refuses by, before anything is uploaded.
  const bytes = readInputFile(archive, displayPath(archive));
  const entries = await readArchive(archive, bytes, archiveZipLimits(settings.maxUploadBytes));
  const badNames = archiveNameProblems(entries);
  if (badNames.length) {
    const shown = badNames
      .slice(0, 5)
      .map((p) => `${p.fileName} (${p.detail})`)
      .join('; ');
    throw new UsageError(
      `${displayPath(archive)}: ${badNames.length} entry name(s) the service refuses: ${shown}${badNames.length > 5 ? '; …' : ''}`,
      'Rename those files, or zip the build output again with signgate pack.',
    );
  }
  refuseSecretFiles(
    entries.map((e) => secretFile(`${displayPath(archive)}: ${e.name}`, e.bytes)),
    options.force === true,
    'Make the archive again without it (signgate pack refuses such files)',
  );
  const inputs: CheckInput[] = entries
    .filter((e) => ARCHIVE_ASSEMBLY.test(e.name))
    .map((e) => ({ path: e.name, uploadName: e.name, bytes: e.bytes, explicit: true }));
  const check = await runEngine(checkProduct({ settings, severities: prepared.severities }), inputs, inThisThread());
  const empty = { files: entries.length, assemblies: inputs.length, signed: 0, verified: 0, failed: 0 };
  if ((options.check ?? true) && check.summary.errors > 0) {
    return { jobId: null, output: null, files: [], check, stoppedByCheck: true, deleted: false, summary: empty };
  }
  const destination = resolve(options.destination ?? 'signed');
  const output = /\.zip$/i.test(destination) ? destination : join(destination, `${basename(archive).replace(/\.zip$/i, '')}-signed.zip`);
  const client = createServiceClient(clientOptions({ baseUrl, accessToken: token }, { env: options.env, onRetry: events.retry }));
  const job = await client.uploadArchive(bytes, basename(archive), options.comment);
  const jobId = job.id;
  events.jobStarted?.({ jobId, resumed: false });
  events.log?.(`uploaded ${basename(archive)} (${bytes.length} bytes, ${inputs.length} assemblies) as job ${jobId}`);
  const status = await pollJob(client, { id: jobId, links: job.links }, options.timeoutS ?? 600, options.pollIntervalMs ?? 1000, entries.length);
  // The signature record, as for `sign` of files: checked before the download, tied to the bytes after it.
  const ledger = new Ledger();
  const recorded = await checkRecordProof({ client, ledger, baseUrl, jobId, proof: status.signatureRecord, ...(expectedKey ? { expectedKey } : {}) });
  mkdirSync(dirname(output), { recursive: true });
  // The service's link when it leads to the base URL's origin; else the archive's own route (the client's fallback
  // for a foreign link is the assemblies package, which lacks the archive's other files).
  const archiveUrl = `${baseUrl.replace(/\/+$/, '')}/archives/${encodeURIComponent(jobId)}`;
  const offered = job.links.download;
  const download = offered && sameOrigin(offered, baseUrl) ? offered : archiveUrl;
  await client.download({ id: jobId, links: { download } }, downloadTo(output), { maxBytes: 2 * bytes.length + 16 * 1024 * 1024 + 2 * entries.length * 4096 });
  // A refused result is not left where a result belongs: it goes to the cache folder, named in the error.
  const kept = join(makeCacheDir(), `refused-${jobId.replace(/[^A-Za-z0-9_-]/g, '_')}.zip`);
  const keptAt = `kept at ${displayPath(kept)}, not in ${displayPath(dirname(output))}`;
  const keepRefused = () => renameSync(output, kept);
  let returnedEntries: ZipFileEntry[];
  try {
    // The client's own limits, as for an upload: a result archive is no more trusted than one from a user.
    returnedEntries = await readArchive(output, readFileSync(output), archiveZipLimits(2 * settings.maxUploadBytes));
  } catch (error) {
    keepRefused();
    throw new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `the result archive of job ${jobId} was refused: ${(error as Error).message}; it is ${keptAt}`, {
      method: 'GET',
      url: archiveUrl,
    });
  }
  const returned = new Map(returnedEntries.map((e) => [e.name, e.bytes]));
  try {
    const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
    const files = entries
      .filter((e) => ARCHIVE_ASSEMBLY.test(e.name))
      .map((e) => ({ uploadName: e.name, uploadedSha256: sha256(e.bytes), returned: returned.get(e.name) }));
    bindRecordToFiles(recorded, files, baseUrl, jobId, `the result archive is ${keptAt}`);
    await recorded.keep(`the result archive is ${keptAt}`);
  } catch (error) {
    keepRefused();
    throw error;
  }
  events.log?.(describeRecordCheck(recorded, jobId, baseUrl));
  const stateOf = new Map(status.assemblies.map((a) => [a.fileName, a.fileProcessingState]));
  // A file to sign must come back signed; any file may come back only as sent or signed: else the run fails.
  const needed = new Set(check.files.filter((f) => f.needsSigning && f.role !== 'module').map((f) => f.path));
  const files = entries.map((e): ArchiveFileResult => {
    const state = stateOf.get(e.name) ?? (ARCHIVE_ASSEMBLY.test(e.name) ? ClientFileState.Missing : 'not an assembly');
    const back = returned.get(e.name);
    if (!back) return { name: e.name, state, verified: false, reason: 'the result archive does not contain the file', failed: true };
    // What the service did not sign must come back as it went up: a changed file is somebody else's work.
    if (!isSignedState(state)) {
      if (!Buffer.from(back).equals(e.bytes))
        return {
          name: e.name,
          state,
          verified: false,
          reason: `the service did not sign it${state === 'not an assembly' ? '' : ` (${state})`}, but it came back changed`,
          failed: true,
        };
      return { name: e.name, state, verified: false, reason: state === 'not an assembly' ? null : `the service reports ${state}`, failed: needed.has(e.name) };
    }
    // A netmodule is never signed: it must come back byte for byte, or its assembly's File-table hash breaks.
    if (/\.netmodule$/i.test(e.name)) {
      const same = Buffer.from(back).equals(e.bytes);
      return { name: e.name, state, verified: same, reason: same ? null : 'the netmodule came back changed', failed: !same };
    }
    const reason = checkReturnedFile(e.bytes, back, settings.keys);
    return { name: e.name, state, verified: reason === null, reason, failed: reason !== null };
  });
  // Files the service put in that were never sent: reported, and taken out of the result archive.
  const sent = new Set(entries.map((e) => e.name));
  const isLog = (name: string) => name === SIGNING_LOG || name.startsWith(`${PER_FILE_LOGS}/`);
  const extras = returnedEntries.filter((e) => !sent.has(e.name) && !isLog(e.name)).map((e) => e.name);
  if (extras.length) {
    const kept = returnedEntries.filter((e) => sent.has(e.name) || isLog(e.name));
    await writeZipFile(
      output,
      kept.map((e) => ({ name: e.name, source: { bytes: e.bytes } })),
    );
    events.log?.(
      `the result archive held ${extras.length} file(s) that were never sent (${extras.slice(0, 5).join(', ')}${extras.length > 5 ? ', …' : ''}): left out of ${basename(output)}`,
    );
  }
  let deleted = false;
  if (options.deleteAfterwards) {
    await client.delete(jobId);
    deleted = true;
  }
  events.jobDone?.({ jobId });
  const signed = files.filter((f) => isSignedState(f.state) && ARCHIVE_ASSEMBLY.test(f.name)).length;
  const verified = files.filter((f) => f.verified).length;
  const failed = files.filter((f) => f.failed).length + extras.length;
  return {
    jobId,
    output,
    files,
    extras,
    check,
    stoppedByCheck: false,
    deleted,
    summary: { files: entries.length, assemblies: inputs.length, signed, verified, failed },
  };
}

/** The first SECRET_SCAN_BYTES of a file: enough to know a key pair, a PEM key or a token file. */
function readHead(path: string): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(SECRET_SCAN_BYTES);
    return head.subarray(0, readSync(fd, head, 0, head.length, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * Refuses private keys always, and token-shaped files unless `force`: named, with what they hold (never their
 * content) and how to leave them out.
 * @throws UsageError SG_ERR_USAGE
 */
function refuseSecretFiles(found: readonly (SecretFile | undefined)[], force: boolean, leaveOut: string): void {
  const secrets = found.filter((f): f is SecretFile => f !== undefined);
  const refused = secrets.filter((f) => f.privateKey || !force);
  if (refused.length === 0) return;
  const shown = refused
    .slice(0, 5)
    .map((f) => `${f.name} is ${f.what}`)
    .join('; ');
  const keys = refused.some((f) => f.privateKey);
  throw new UsageError(
    `${shown}${refused.length > 5 ? `; and ${refused.length - 5} more` : ''}: nothing was written or uploaded`,
    `${leaveOut}.${keys ? ' A private key is never packed, with or without --force.' : ' If the file holds no secret, pass --force to include it.'}`,
  );
}

/** True when `link` (absolute, or relative to `base`) is on `base`'s origin. */
function sameOrigin(link: string, base: string): boolean {
  try {
    return new URL(link, base).origin === new URL(base).origin;
  } catch {
    return false;
  }
}
