// audit(): the release report auditors ask for, as a library function: every assembly with its hash, identity,
// verified strong name, vendor attribute and signing job (from the local ledger), compared with the previous
// release when given: prepare (pipeline/index.ts) → the ledger, manifest, previous report and record → the engine
// with the audit's product.
import { readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UsageError } from '../core/errors.js';
import { VERSION } from '../runtime/version.js';
import { formatAuditHtml } from '../report/audit-html.js';
import { formatAuditJson, formatAuditJsonPieces } from '../report/audit-json.js';
import { formatAuditMarkdown } from '../report/audit-markdown.js';
import { diffAuditReports } from '../audit/compare.js';
import type { AuditOptions as AuditEngineOptions, AuditReport } from '../audit/model.js';
import type { CheckSettings } from '../rules/types.js';
import { auditProduct, auditWithSbomProduct } from '../audit/audit-product.js';
import { parseDepsJson, type DepsFile } from '../audit/nuget.js';
import { fileDigests } from '../audit/sbom-evidence.js';
import { buildInventory, type OtherFileEvidence, type ReleaseInventory } from '../audit/sbom-inventory.js';
import type { SbomOptions } from '../report/audit-sbom-options.js';

export { SbomSpecVersions, type SbomOptions, type SbomSpecVersion } from '../report/audit-sbom-options.js';
import { readInput } from '../engine/index.js';
import { runEngine } from '../engine/index.js';
import { parsePublicKeyBlob } from '../strongname/key-blob.js';
import { publicKeyToken } from '../strongname/key-token.js';
import { auditRecords, readAuditJson, type SavedCheckpoint } from './audit-records.js';
import { displayPath, expandInputs, noAssembliesError } from './input-paths.js';
import { digestFile, readInputs } from './files.js';
import { nugetPackageFolder, readPackages } from './nuget-packages.js';
import { Ledger } from './ledger.js';

export { jobsFromLedger, readSignatureRecord } from './audit-records.js';
import {
  BOUNDED,
  DEFAULT_MAX_UPLOAD_BYTES,
  engineRunner,
  prepareCheck,
  readFiles,
  type CheckOptions,
  type PreparedCheck,
  type ReadFiles,
} from './pipeline/index.js';

/** What one audit format makes of a report: the whole text, the same in pieces when it has its own, and the extensions that name it. */
interface AuditRenderer {
  readonly whole: (report: AuditReport, generatedAt: string | null) => string;
  readonly pieces?: (report: AuditReport, generatedAt: string | null) => Iterable<string>;
  readonly extensions: readonly string[];
}

/**
 * The audit's renderers by format name, with the file extensions that name each: the one list of the audit's
 * formats. `--format`'s choices, AuditFormats and what `-o`'s extension chooses come from it.
 */
const AUDIT_RENDERERS = {
  html: { whole: formatAuditHtml, extensions: ['.html', '.htm'] },
  markdown: { whole: formatAuditMarkdown, extensions: ['.md', '.markdown'] },
  json: { whole: formatAuditJson, pieces: formatAuditJsonPieces, extensions: ['.json'] },
} as const satisfies Record<string, AuditRenderer>;

export type AuditFormat = keyof typeof AUDIT_RENDERERS;
/** The audit's report formats, in the order `--help` lists them. */
export const AuditFormats = Object.keys(AUDIT_RENDERERS) as readonly AuditFormat[] as readonly [AuditFormat, ...AuditFormat[]];

/** The format a report file's extension names (`.md` is Markdown; case does not matter), or undefined. */
export function auditFormatOfExtension(extension: string): AuditFormat | undefined {
  const wanted = extension.toLowerCase();
  return AuditFormats.find((f) => (AUDIT_RENDERERS[f] as AuditRenderer).extensions.includes(wanted));
}

export interface AuditOptions extends Omit<CheckOptions, 'format' | 'output'> {
  /** The previous release's audit JSON: adds what changed. */
  readonly compare?: string;
  /** Files the release must contain: one relative path per line, or a JSON array. */
  readonly manifest?: string;
  /** The job ledger to take signing jobs from (default: the user's). */
  readonly ledger?: Ledger;
  /** The signing service's record (`signgate serve record export`, or the data directory's signature-record.jsonl). */
  readonly record?: string;
  /**
   * A checkpoint of the record saved earlier (a job ledger's, or `signgate serve record checkpoint`'s): `record` must
   * continue it (no rollback, truncation or rewrite). Needs `recordKey`.
   */
  readonly recordCheckpoint?: string;
  /** The record key that signs checkpoints: a file (the service's record-key.pub) or the verifier key's text. */
  readonly recordKey?: string;
}

/** The checkpoint options of an audit, checked: both or neither, and only with a record. */
function savedCheckpoint(options: Pick<AuditOptions, 'record' | 'recordCheckpoint' | 'recordKey'>): SavedCheckpoint | undefined {
  if (options.recordCheckpoint === undefined && options.recordKey === undefined) return undefined;
  if (!options.record)
    throw new UsageError(
      '--checkpoint and --record-key check a signature record: pass --record too',
      'Run: signgate audit release/ --record record.jsonl --checkpoint saved.checkpoint --record-key record-key.pub',
    );
  if (options.recordCheckpoint === undefined || options.recordKey === undefined) {
    throw new UsageError(
      `--${options.recordCheckpoint === undefined ? 'record-key' : 'checkpoint'} needs --${options.recordCheckpoint === undefined ? 'checkpoint' : 'record-key'}`,
      "Pass the checkpoint you saved and the service's record public key (signgate serve record public-key) together.",
    );
  }
  return { checkpoint: options.recordCheckpoint, key: options.recordKey };
}

function statSafe(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Builds the release audit.
 * @example
 * const report = await audit({ paths: ['release'], keys: ['12345_public.snk'], vendor: 'Contoso' });
 * writeFileSync('audit.html', renderAudit(report, 'html', null));
 * @throws UsageError for bad options, a previous report that is not an audit JSON, or a bad manifest; SG_ERR_NO_INPUT
 *   when the inputs hold no assembly
 */
export async function audit(options: AuditOptions): Promise<AuditReport> {
  const { read, records } = await prepareAudit(options);
  return runEngine(auditProduct(records), read.inputs, await engineRunner(read));
}

/** What an audit runs the engine with: the release read, and the records beside it (jobs, manifest, previous report, record). */
async function prepareAudit(options: AuditOptions, beforeReading: (config: PreparedCheck['config']) => void = () => {}) {
  const paths = options.paths ?? [];
  // With one folder, names in the manifest and comparisons are relative to it.
  const single = paths.length === 1 && statSafe(paths[0]!)?.isDirectory() ? paths[0] : undefined;
  const root = options.root ?? single;
  // The checkpoint options are checked before the release is read.
  const saved = savedCheckpoint(options);
  const read = await prepareCheck({ ...options, ...(root ? { root } : {}) }, BOUNDED);
  beforeReading(read.config);
  // A release with no assembly is no release to vouch for: never a report of 0 files that passes.
  if (read.inputs.length === 0) throw noAssembliesError(read.paths);
  const records = auditRecords(options, read.settings, saved, read.inputs);
  return { read, records: root && records.manifest ? { ...records, ...otherFilesFor(records.manifest, root) } : records };
}

/**
 * The files of the release folder that are not assemblies, when the manifest lists the whole folder (it names a file
 * that is not an assembly, as the build's ship manifest does): a stale readme or configuration file is an extra file
 * then, as a stale assembly is. A manifest of assemblies alone compares the assemblies alone.
 */
function otherFilesFor(manifest: readonly string[], root: string): Pick<AuditEngineOptions, 'otherFiles'> {
  if (manifest.every((m) => MODULE_FILE.test(m))) return {};
  const folder = resolve(root);
  const otherFiles: { name: string; path: string }[] = [];
  const walk = (dir: string, prefix: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, `${prefix}${entry.name}/`);
      else if (entry.isFile() && !MODULE_FILE.test(entry.name)) otherFiles.push({ name: `${prefix}${entry.name}`, path: displayPath(path) });
    }
  };
  walk(folder, '');
  return { otherFiles: otherFiles.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
}

export interface AuditSbomOptions extends AuditOptions {
  /** The SBOM's creator (required: an e-mail address or a URL), the primary component and the licence of the vendor's own files. */
  readonly sbom: SbomOptions;
  /** The NuGet package folder the packages' .nuspec files are read from (default: NUGET_PACKAGES, else ~/.nuget/packages). */
  readonly nugetPackages?: string;
}

/** An audit with the release's bill of materials: the report, the inventory the SBOM is written from, and its options. */
export interface AuditWithSbom {
  readonly report: AuditReport;
  readonly inventory: ReleaseInventory;
  readonly sbom: SbomOptions;
}

const MODULE_FILE = /\.(dll|exe|netmodule)$/i;

/**
 * The SBOM options with the creator from signgate.config.json when the options do not name one.
 * @throws UsageError when neither names an e-mail address or a URL (BSI TR-03183-2 requires the SBOM's creator)
 */
function sbomCreator(sbom: SbomOptions, config: { sbomCreatorUrl?: string; sbomCreatorEmail?: string }): SbomOptions {
  const creatorUrl = sbom.creatorUrl ?? (sbom.creatorEmail ? undefined : config.sbomCreatorUrl);
  const creatorEmail = sbom.creatorEmail ?? (sbom.creatorUrl ? undefined : config.sbomCreatorEmail);
  if (!creatorUrl && !creatorEmail) {
    throw new UsageError(
      'the SBOM needs its creator: --sbom-creator-url or --sbom-creator-email (BSI TR-03183-2 requires an e-mail address or a URL of who made it)',
      'Pass --sbom-creator-url https://contoso.example or --sbom-creator-email release@contoso.example, or put "sbomCreatorUrl" or "sbomCreatorEmail" in signgate.config.json.',
    );
  }
  if (creatorUrl && !/^https?:\/\/\S+$/i.test(creatorUrl))
    throw new UsageError(`--sbom-creator-url ${creatorUrl} is not an http(s) URL`, 'Pass the URL of your organization, such as https://contoso.example.');
  if (creatorEmail && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(creatorEmail))
    throw new UsageError(`--sbom-creator-email ${creatorEmail} is not an e-mail address`, 'Pass an address such as release@contoso.example.');
  return { ...sbom, ...(creatorUrl ? { creatorUrl } : {}), ...(creatorEmail ? { creatorEmail } : {}) };
}

/**
 * The release audit and its bill of materials from the same evidence: the engine reads each assembly once for both
 * (the SHA-512 and the references in the audit's per-file step), the files that are no assemblies are read once for
 * their hashes (and a `*.deps.json` parsed from those bytes), and the NuGet package folder gives each package's
 * `.nuspec`. renderSbom writes it.
 * @throws UsageError as audit(), and when the SBOM's creator is missing or --nuget-packages is no folder
 */
export async function auditWithSbom(options: AuditSbomOptions): Promise<AuditWithSbom> {
  let sbom = options.sbom;
  let packageFolder: string | null = null;
  // The creator and the package folder are checked before the engine runs.
  const { read, records } = await prepareAudit(options, (config) => {
    sbom = sbomCreator(options.sbom, config);
    packageFolder = nugetPackageFolder(options.nugetPackages);
  });
  const { report, inventory } = await inventoryOf(read.paths, read, records, packageFolder);
  return { report, inventory, sbom: { creatorName: read.settings.vendor, ...sbom } };
}

/**
 * The audit and the inventory of the release read as `read` (from `paths`): the engine's run with the SBOM's evidence,
 * then the files that are no assemblies, read one at a time for their hashes (a deps.json parsed from the same
 * bytes), and the packages of the deps.json files in `packageFolder`.
 */
async function inventoryOf(paths: readonly string[], read: ReadFiles, records: AuditEngineOptions, packageFolder: string | null) {
  const { report, sbom: evidence } = await runEngine(auditWithSbomProduct(records), read.inputs, await engineRunner(read));
  // The files that are no assemblies, hashed one at a time (a deps.json parsed from the same bytes).
  const audited = new Set(read.inputs.map((i) => i.path));
  const rest = (await expandInputs(paths, process.cwd(), { everyFile: true })).filter((f) => !audited.has(f.displayPath) && !MODULE_FILE.test(f.absolutePath));
  const others: OtherFileEvidence[] = [];
  const deps: (DepsFile | { name: string; path: string; error: string })[] = [];
  const buffer = Buffer.allocUnsafe(1 << 20);
  const named = readInputs(rest, read.root, { onDemand: true, threads: 0, readAtOnceBytes: 0 }).inputs;
  for (let i = 0; i < rest.length; i++) {
    const input = named[i]!;
    // A deps.json is read whole, to be parsed from the bytes hashed; any other file a megabyte at a time.
    if (!/\.deps\.json$/i.test(input.uploadName)) {
      others.push({ path: input.path, name: input.uploadName, ...digestFile(rest[i]!.absolutePath, input.path, buffer) });
      continue;
    }
    const bytes = readInput(input);
    others.push({ path: input.path, name: input.uploadName, size: bytes.length, ...fileDigests(bytes) });
    try {
      deps.push(parseDepsJson(input.uploadName, Buffer.from(bytes).toString('utf8')));
    } catch (error) {
      deps.push({ name: input.uploadName, path: input.path, error: (error as Error).message });
    }
  }
  const parsed = deps.filter((d): d is DepsFile => !('error' in d));
  const modified = new Map<string, string>();
  for (const f of rest) modified.set(displayPath(f.absolutePath), modifiedOf(f.absolutePath));
  for (const f of report.files) if (!f.assembly) modified.set(f.path, modifiedOf(f.path));
  const inventory = buildInventory({ report, evidence, others, deps, packages: packageFolder ? readPackages(parsed, packageFolder) : null, modified });
  return { report, inventory };
}

/** A file's modification time, ISO 8601 UTC (the guideline's version of a file that has none), or '' when unknown. */
function modifiedOf(path: string): string {
  const m = statSafe(path)?.mtime;
  return m ? m.toISOString() : '';
}

/**
 * The SBOM of an audit as CycloneDX JSON (see report/audit-sbom.ts), in pieces (a component at a time: write them
 * with writeFileAtomic, or join them); `timestamp` null leaves the time out, so the same release gives the same bytes. The CycloneDX library is loaded here, when an SBOM is written. (Its strict
 * schema validator, which the tests run over every SBOM, takes about 2 s to compile the schema: not on every run.)
 */
export async function renderSbom(result: AuditWithSbom, timestamp: string | null): Promise<Iterable<string>> {
  const { formatAuditSbomPieces } = await import('../report/audit-sbom.js');
  return formatAuditSbomPieces(result.inventory, result.report.settings, result.sbom, timestamp);
}

/** The report as HTML (one self-contained page), Markdown or JSON; `generatedAt` null leaves the time out. */
export function renderAudit(report: AuditReport, format: AuditFormat, generatedAt: string | null): string {
  return AUDIT_RENDERERS[format].whole(report, generatedAt);
}

/** renderAudit's text in pieces (the JSON a file or finding at a time), for writing a large report to a file. */
export function renderAuditPieces(report: AuditReport, format: AuditFormat, generatedAt: string | null): Iterable<string> {
  const renderer: AuditRenderer = AUDIT_RENDERERS[format];
  return renderer.pieces ? renderer.pieces(report, generatedAt) : [renderer.whole(report, generatedAt)];
}

export interface VerifyReportResult {
  /** What was compared, in words ("hashes, keys, strong-name states, …"), and over how many files. */
  readonly compared: string;
  readonly files: number;
  /** One sentence per difference between the stored report and the folder; empty when they agree. */
  readonly differences: readonly string[];
  /** Things worth saying that are not differences (another signgate version made the report). */
  readonly notes: readonly string[];
  /** The report made now, from the stored report's inputs. */
  readonly report: AuditReport;
}

/**
 * Re-checks a stored audit JSON against a release folder: audits the folder again with the inputs the report
 * records (its vendor settings and public keys, so the key files are not needed) and names every difference
 * in the evidence: files added or missing, hashes, identities, key tokens, strong-name states and
 * verification, vendor attribute, option, outcome and findings.
 * @throws UsageError when the report is not an audit JSON of format 2 or later
 */
export async function verifyAuditReport(options: {
  readonly report: string;
  readonly paths: readonly string[];
  readonly root?: string;
  readonly ledger?: Ledger;
  readonly threads?: number;
  readonly readAtOnceBytes?: number;
  readonly record?: string;
}): Promise<VerifyReportResult> {
  const hint = 'Pass the JSON written by `signgate audit --format json` (signgate 0.1 or later writes format 2), or the SBOM of `signgate audit --sbom`.';
  const stored = readAuditJson(options.report, hint);
  if ((stored as { bomFormat?: unknown }).bomFormat === 'CycloneDX') return verifySbom(options, stored as unknown as StoredSbom);
  if (!Array.isArray(stored?.files) || !Array.isArray(stored.settings?.keys) || !stored.settings.keys.every((k) => typeof k.publicKey === 'string')) {
    throw new UsageError(`${options.report} is not an audit JSON report that records its inputs (format ${String(stored?.formatVersion)})`, hint);
  }
  if (options.paths.length === 0)
    throw new UsageError('no release folder to verify the report against', 'Name the release folder: signgate audit --verify-report report.json release/');
  if (stored.signatureRecord && !options.record) {
    throw new UsageError(
      `${options.report} was made with the signature record ${stored.signatureRecord.file}`,
      `Pass that record again: signgate audit --verify-report ${options.report} <release folder> --record ${stored.signatureRecord.file}`,
    );
  }
  const root = sbomRoot(options);
  const s = stored.settings;
  // As the audit reads a folder: with its netmodules, which the report lists.
  const read = await readFiles({ paths: options.paths, root, threads: options.threads, readAtOnceBytes: options.readAtOnceBytes }, BOUNDED);
  const settings: CheckSettings = {
    vendor: s.vendor,
    vendorApi: s.vendorApi,
    vendorNamespace: s.vendorNamespace,
    // The token is computed again from the key, so a report whose token and key disagree shows a difference.
    keys: s.keys.map((k) => {
      const publicKey = parsePublicKeyBlob(Buffer.from(k.publicKey, 'hex'));
      // Named from the report's folder (relativeToReport): shown from here again, as the findings were when it was made.
      const source = isAbsolute(k.source) ? k.source : displayPath(resolve(dirname(resolve(options.report)), k.source));
      return { optionId: k.optionId, source, token: publicKeyToken(publicKey.blob), publicKey };
    }),
    maxUploadBytes: DEFAULT_MAX_UPLOAD_BYTES,
    root: root ? displayPath(root) : null,
  };
  const records = auditRecords({ ledger: options.ledger, record: options.record }, settings, undefined, read.inputs);
  const report = await runEngine(auditProduct(records), read.inputs, await engineRunner(read));
  const notes = stored.tool?.version && stored.tool.version !== VERSION ? [`the report was made by signgate ${stored.tool.version}; this is ${VERSION}`] : [];
  return {
    compared: 'the same hashes, keys, strong-name states, Authenticode signatures, vendor attributes, options and findings',
    files: report.files.length,
    differences: diffAuditReports(stored, report),
    notes,
    report,
  };
}

/** The parts of a stored CycloneDX SBOM that `--verify-report` compares. */
interface StoredSbom {
  readonly metadata?: {
    readonly properties?: readonly { name: string; value: string }[];
    readonly tools?: { readonly components?: readonly { name?: string; version?: string }[] };
  };
  readonly components?: readonly {
    readonly name?: string;
    readonly version?: string;
    readonly hashes?: readonly { alg: string; content: string }[];
    readonly properties?: readonly { name: string; value: string }[];
  }[];
}

/**
 * Re-checks an SBOM of `audit --sbom` against the folder: the same files (by their path in the release), the same
 * SHA-512, and for each assembly the same identity (name, version, culture, public key token).
 * @throws UsageError when the SBOM has no component signgate wrote (no `signgate:path`)
 */
/** The root folder of the names a stored report or SBOM is compared by: the option, else the one folder given. */
function sbomRoot(options: { readonly paths: readonly string[]; readonly root?: string }): string | null {
  const single = options.paths.length === 1 && statSafe(options.paths[0]!)?.isDirectory() ? options.paths[0] : undefined;
  const rootArg = options.root ?? single;
  return rootArg ? resolve(rootArg) : null;
}

async function verifySbom(
  options: { readonly report: string; readonly paths: readonly string[]; readonly root?: string; readonly ledger?: Ledger; readonly threads?: number },
  stored: StoredSbom,
): Promise<VerifyReportResult> {
  const prop = (c: { properties?: readonly { name: string; value: string }[] } | undefined, name: string) => c?.properties?.find((p) => p.name === name)?.value;
  const components = (stored.components ?? []).filter((c) => prop(c, 'signgate:path') !== undefined);
  const vendor = prop(stored.metadata, 'signgate:vendor');
  if (components.length === 0 || !vendor)
    throw new UsageError(
      `${options.report} is a CycloneDX SBOM, but not one of signgate audit --sbom (no signgate:path on its components, or no signgate:vendor)`,
      'Pass the SBOM written by signgate audit --sbom, or an audit JSON.',
    );
  if (options.paths.length === 0)
    throw new UsageError('no release folder to verify the SBOM against', `Name the release folder: signgate audit --verify-report ${options.report} release/`);
  // As the audit was made: the vendor and the public keys the SBOM records (no key files needed).
  const keys = (stored.metadata?.properties ?? []).filter((p) => p.name === 'signgate:key').map((p) => p.value.split(':'));
  const read = await readFiles({ paths: options.paths, root: sbomRoot(options), threads: options.threads }, BOUNDED);
  const settings: CheckSettings = {
    vendor,
    vendorApi: [`${vendor}.*`],
    vendorNamespace: vendor,
    keys: keys.map(([optionId, , hex]) => {
      const publicKey = parsePublicKeyBlob(Buffer.from(hex ?? '', 'hex'));
      return {
        optionId: optionId && /^\d+$/.test(optionId) ? Number(optionId) : null,
        source: options.report,
        token: publicKeyToken(publicKey.blob),
        publicKey,
      };
    }),
    maxUploadBytes: DEFAULT_MAX_UPLOAD_BYTES,
    root: read.root ? displayPath(read.root) : null,
  };
  const now = await inventoryOf(options.paths, read, auditRecords({ ledger: options.ledger }, settings, undefined, read.inputs), null);
  const before = new Map(components.map((c) => [prop(c, 'signgate:path')!, c]));
  const after = new Map(now.inventory.files.map((f) => [f.name, f]));
  const differences: string[] = [];
  for (const name of [...before.keys()].sort()) if (!after.has(name)) differences.push(`${name} is in the SBOM but not in the folder`);
  for (const name of [...after.keys()].sort()) if (!before.has(name)) differences.push(`${name} is in the folder but not in the SBOM`);
  for (const [name, f] of after) {
    const c = before.get(name);
    if (!c) continue;
    const sha512 = c.hashes?.find((h) => h.alg === 'SHA-512')?.content;
    if (sha512 !== f.sha512) differences.push(`${name}: SHA-512 ${sha512 ?? 'none'} in the SBOM, ${f.sha512} in the folder`);
    const a = f.audit?.assembly;
    const identity = (x: { name?: string | undefined; version?: string | undefined; culture?: string | undefined; token?: string | undefined }) =>
      `${x.name ?? '?'}, Version=${x.version ?? '?'}, Culture=${x.culture || 'neutral'}, PublicKeyToken=${x.token ?? 'null'}`;
    const was =
      prop(c, 'signgate:kind') === 'assembly'
        ? identity({ name: c.name, version: c.version, culture: prop(c, 'signgate:assembly:culture'), token: prop(c, 'signgate:publicKeyToken') })
        : null;
    const is = a ? identity({ name: a.name, version: a.version, culture: a.culture, token: a.publicKeyToken ?? undefined }) : null;
    if (was !== is) differences.push(`${name}: identity ${was ?? 'no assembly'} in the SBOM, ${is ?? 'no assembly'} in the folder`);
  }
  const made = stored.metadata?.tools?.components?.find((t) => t.name === 'signgate')?.version;
  return {
    compared: 'the same files, SHA-512 and assembly identities',
    files: now.inventory.files.length,
    differences,
    notes: made && made !== VERSION ? [`the SBOM was made by signgate ${made}; this is ${VERSION}`] : [],
    report: now.report,
  };
}

/**
 * The report as it will lie in `reportFile`: the paths of its evidence (the key files, the signature record) relative
 * to the report's own folder, so that the report and what it names can be moved or zipped together; one that cannot
 * be (on another drive) stays as it was. The paths were shown relative to `cwd`, or absolute.
 */
export function relativeToReport(report: AuditReport, reportFile: string, cwd = process.cwd()): AuditReport {
  const folder = dirname(resolve(cwd, reportFile));
  const fromReport = (shown: string): string => {
    const rel = relative(folder, resolve(cwd, shown));
    return rel === '' || isAbsolute(rel) ? shown : rel.split(sep).join('/');
  };
  const record = report.signatureRecord;
  return {
    ...report,
    settings: { ...report.settings, keys: report.settings.keys.map((k) => ({ ...k, source: fromReport(k.source) })) },
    ...(record ? { signatureRecord: { ...record, file: fromReport(record.file) } } : {}),
  };
}
