// The release's bill of materials as CycloneDX JSON (1.6 by default, 1.7 on request), made with the CycloneDX
// project's own library (@cyclonedx/cyclonedx-library: its models and its JSON normalizers, the part of its
// JsonSerializer that makes the document) from the audit's inventory (audit/sbom-inventory.ts), a component at a
// time. What the library's models do not hold yet (`manufacturer` on the metadata and on components, a component's
// `evidence.occurrences`, `compositions`) is added to the normalized document in the schema's own shape; the tests validate every SBOM with
// the library's strict JSON-schema validator. The fields BSI TR-03183-2 v2.1 requires and where they are:
// docs/audit.md.
import { createHash } from 'node:crypto';
// The library's parts by their own entry points: loading the whole library (its validators and factories too) took
// twice as long.
import * as Enums from '@cyclonedx/cyclonedx-library/Enums';
import * as Models from '@cyclonedx/cyclonedx-library/Models';
import * as Serialize from '@cyclonedx/cyclonedx-library/Serialize';
import * as SPDX from '@cyclonedx/cyclonedx-library/SPDX';
import * as Spec from '@cyclonedx/cyclonedx-library/Spec';
import { VERSION } from '../runtime/version.js';
import type { AuditReport } from '../audit/model.js';
import type { InventoryFile, ReleaseInventory } from '../audit/sbom-inventory.js';
import type { SbomReference } from '../audit/sbom-evidence.js';
import type { SbomOptions } from './audit-sbom-options.js';
import { nugetPackageUrl, nugetPurl } from '../audit/nuget.js';

type Json = Record<string, unknown>;

/** bsi:component:executable: PE images and scripts run; the rest is data. */
const SCRIPT = /\.(ps1|psm1|bat|cmd|sh|js|vbs|py)$/i;
const ARCHIVE = /\.(zip|nupkg|snupkg|jar|tar|tgz|gz|7z|cab|msi|vsix)$/i;
/** Formats that describe their own content: PE images and metadata, archives' directories, JSON, XML, PDB streams. */
const STRUCTURED = /\.(dll|exe|netmodule|winmd|pdb|json|xml|config|resx|nuspec|props|targets|deps\.json|runtimeconfig\.json)$/i;

function bsiProperties(f: InventoryFile): [string, string][] {
  const pe = f.kind === 'assembly' || f.kind === 'native';
  return [
    ['bsi:component:filename', f.fileName],
    ['bsi:component:executable', pe || SCRIPT.test(f.name) ? 'executable' : 'non-executable'],
    ['bsi:component:archive', ARCHIVE.test(f.name) ? 'archive' : 'no archive'],
    ['bsi:component:structured', pe || ARCHIVE.test(f.name) || STRUCTURED.test(f.name) ? 'structured' : 'unstructured'],
  ];
}

/** A reference as .NET writes an identity: `Name, Version=…, Culture=…, PublicKeyToken=…`. */
export function referenceIdentity(r: SbomReference): string {
  return `${r.name}, Version=${r.version}, Culture=${r.culture || 'neutral'}, PublicKeyToken=${r.publicKeyToken ?? 'null'}`;
}

/** The evidence no other SBOM has, as `signgate:` properties (docs/audit.md lists them). */
function signgateProperties(f: InventoryFile): [string, string][] {
  const out: [string, string][] = [
    ['signgate:path', f.name],
    ['signgate:kind', f.kind],
  ];
  const put = (name: string, value: string | number | boolean | null | undefined) => {
    if (value !== null && value !== undefined && value !== '') out.push([name, String(value)]);
  };
  const a = f.audit;
  if (a?.assembly) {
    put('signgate:assembly:culture', a.assembly.culture);
    put('signgate:publicKeyToken', a.assembly.publicKeyToken);
  }
  put('signgate:assembly:fileVersion', f.fileVersion);
  put('signgate:assembly:informationalVersion', f.informationalVersion);
  if (a) {
    put('signgate:strongName:state', a.strongName?.state ?? 'unreadable');
    put('signgate:strongName:verdict', a.verdict);
    if (a.strongName) {
      put('signgate:strongName:key', a.strongName.key);
      put('signgate:strongName:signedWithExpectedKey', a.strongName.signedWithExpectedKey);
      put('signgate:strongName:signatureValid', a.strongName.signatureValid);
      put('signgate:strongName:hashAlgorithm', a.strongName.hashAlgorithm);
      put('signgate:strongName:keyBits', a.strongName.keyBits);
      put('signgate:strongName:optionId', a.strongName.optionId);
    }
    put('signgate:role', a.role);
    put('signgate:needsSigning', a.needsSigning);
    put('signgate:vendorAttribute', a.vendorAttribute);
    put('signgate:outcome', a.outcome);
    if (a.authenticode) {
      put('signgate:authenticode:state', a.authenticode.state);
      put('signgate:authenticode:signer', a.authenticode.publisher);
      put('signgate:authenticode:issuer', a.authenticode.issuer);
      put('signgate:authenticode:timestamp', a.authenticode.timestamp);
    }
    if (a.job) {
      put('signgate:job:id', a.job.jobId);
      put('signgate:job:date', a.job.date);
    }
    if (a.signature) {
      put('signgate:record:seq', a.signature.seq);
      put('signgate:record:leafHash', a.signature.hash);
      put('signgate:record:time', a.signature.time);
      put('signgate:record:job', a.signature.job);
      put('signgate:record:keyToken', a.signature.keyToken);
    }
  }
  if (f.package) {
    put('signgate:nuget:depsFile', f.package.depsFile);
    put('signgate:nuget:asset', f.package.asset);
    put('signgate:nuget:sameBytes', f.package.samebytes === null ? 'unknown' : f.package.samebytes);
  }
  for (const r of f.unresolved) put('signgate:unresolvedReference', referenceIdentity(r));
  for (const x of f.findings) put('signgate:finding', `${x.ruleId} ${x.rule} (${x.severity}): ${x.message}`);
  return out;
}

/** A version for every component: the assembly's, else the package's, else the file's modification date (as the guideline says). */
function versionOf(f: InventoryFile): { version: string; source: string } {
  if (f.audit?.assembly) return { version: f.audit.assembly.version, source: 'assembly' };
  if (f.package) return { version: f.package.version, source: 'package' };
  if (f.modified) return { version: f.modified, source: 'modified' };
  return { version: 'unknown', source: 'unknown' };
}

const LICENSE_REF = /^LicenseRef-[A-Za-z0-9.-]+$/;

/**
 * A licence as CycloneDX 1.6 can carry it twice (declared: the original licence; concluded: the distribution licence):
 * a single SPDX id as `license.id`, a `LicenseRef-…` as `license.name`, each once per acknowledgement. A compound
 * expression (`MIT OR Apache-2.0`) can only be the one `expression` a component may have: it is carried as declared,
 * and the property `signgate:licence:concluded` says the distribution licence is that expression as a whole (signgate
 * chooses no alternative for the customer).
 */
function addLicence(c: InstanceType<typeof Models.Component>, expression: string, props: [string, string][]): void {
  const single = expression.trim();
  const fixed = SPDX.fixupSpdxId(single);
  if (fixed && SPDX.isSupportedSpdxId(fixed)) {
    for (const ack of [Enums.LicenseAcknowledgement.Declared, Enums.LicenseAcknowledgement.Concluded])
      c.licenses.add(new Models.SpdxLicense(fixed, { acknowledgement: ack }));
  } else if (LICENSE_REF.test(single) || !/\s/.test(single)) {
    for (const ack of [Enums.LicenseAcknowledgement.Declared, Enums.LicenseAcknowledgement.Concluded])
      c.licenses.add(new Models.NamedLicense(single, { acknowledgement: ack }));
  } else {
    const e = new Models.LicenseExpression(single);
    e.acknowledgement = Enums.LicenseAcknowledgement.Declared;
    c.licenses.add(e);
    props.push(['signgate:licence:concluded', single]);
  }
}

/** The component of one shipped file. */
function fileComponent(
  f: InventoryFile,
  vendor: string,
  options: SbomOptions,
  vendorLicence: string | undefined,
): { component: InstanceType<typeof Models.Component>; manufacturer: Json } {
  const type =
    f.kind === 'assembly' || f.kind === 'native'
      ? /\.exe$/i.test(f.name)
        ? Enums.ComponentType.Application
        : Enums.ComponentType.Library
      : Enums.ComponentType.File;
  const { version, source } = versionOf(f);
  const props: [string, string][] = [...bsiProperties(f), ['signgate:version:source', source]];
  const c = new Models.Component(type, f.audit?.assembly?.name ?? f.fileName, { bomRef: f.bomRef, version });
  c.hashes.set(Enums.HashAlgorithm['SHA-256'], f.sha256);
  c.hashes.set(Enums.HashAlgorithm['SHA-512'], f.sha512);
  const pkg = f.package;
  let manufacturer: Json;
  if (pkg) {
    c.purl = nugetPurl(pkg.id, pkg.version);
    const n = pkg.nuspec;
    const site = `https://www.nuget.org/packages/${encodeURIComponent(pkg.id)}/${encodeURIComponent(pkg.version)}`;
    if (n?.authors) c.author = n.authors;
    const distribution = new Models.ExternalReference(nugetPackageUrl(pkg.id, pkg.version), Enums.ExternalReferenceType.Distribution, {
      comment: "the NuGet package that brought this file; its hash is the .nupkg's",
    });
    if (pkg.packageSha512) distribution.hashes.set(Enums.HashAlgorithm['SHA-512'], pkg.packageSha512);
    c.externalReferences.add(distribution);
    if (n?.repositoryUrl)
      c.externalReferences.add(
        new Models.ExternalReference(
          n.repositoryUrl,
          Enums.ExternalReferenceType.SourceDistribution,
          n.repositoryCommit ? { comment: `commit ${n.repositoryCommit}` } : {},
        ),
      );
    if (n?.repositoryUrl) c.externalReferences.add(new Models.ExternalReference(n.repositoryUrl, Enums.ExternalReferenceType.VCS));
    if (n?.projectUrl) c.externalReferences.add(new Models.ExternalReference(n.projectUrl, Enums.ExternalReferenceType.Website));
    if (!n?.repositoryUrl && n?.projectUrl)
      c.externalReferences.add(
        new Models.ExternalReference(n.projectUrl, Enums.ExternalReferenceType.SourceDistribution, {
          comment: 'the project URL: the package names no repository',
        }),
      );
    if (n?.licenseExpression) addLicence(c, n.licenseExpression, props);
    else if (n?.licenseFile) {
      for (const ack of [Enums.LicenseAcknowledgement.Declared, Enums.LicenseAcknowledgement.Concluded])
        c.licenses.add(
          new Models.NamedLicense(`LicenseRef-${pkg.id.replace(/[^A-Za-z0-9.-]/g, '-')}-${pkg.version.replace(/[^A-Za-z0-9.-]/g, '-')}`, {
            acknowledgement: ack,
          }),
        );
      props.push(['signgate:licence:file', n.licenseFile]);
    } else if (n?.licenseUrl) {
      for (const ack of [Enums.LicenseAcknowledgement.Declared, Enums.LicenseAcknowledgement.Concluded])
        c.licenses.add(new Models.NamedLicense('NOASSERTION', { acknowledgement: ack, url: n.licenseUrl }));
    } else
      props.push([
        'signgate:licence:unknown',
        n ? 'the package declares no licence' : 'the package is not in the NuGet package folder (or none was at hand): its licence is unknown',
      ]);
    manufacturer = { name: n?.authors ?? pkg.id, url: [n?.projectUrl ?? n?.repositoryUrl ?? site] };
  } else {
    // No package names it: the vendor's own file, known by a generic purl that carries its SHA-512.
    c.purl = `pkg:generic/${encodeURIComponent(vendor)}/${encodeURIComponent(f.fileName)}@${encodeURIComponent(version)}?checksum=sha512:${f.sha512}`;
    if (vendorLicence) addLicence(c, vendorLicence, props);
    else props.push(['signgate:licence:unknown', "the vendor's own file: pass --sbom-license to name its licence"]);
    if (options.sourceUri) c.externalReferences.add(new Models.ExternalReference(options.sourceUri, Enums.ExternalReferenceType.SourceDistribution));
    if (options.downloadUri) {
      const d = new Models.ExternalReference(options.downloadUri, Enums.ExternalReferenceType.Distribution);
      d.hashes.set(Enums.HashAlgorithm['SHA-512'], f.sha512);
      c.externalReferences.add(d);
    }
    manufacturer = creatorEntity(options);
  }
  for (const [name, value] of [...props, ...signgateProperties(f)]) c.properties.add(new Models.Property(name, value));
  return { component: c, manufacturer };
}

/** The SBOM's creator as CycloneDX 1.6's organizational entity: its name, URL or contact e-mail. */
function creatorEntity(options: SbomOptions): Json {
  return {
    ...(options.creatorName ? { name: options.creatorName } : {}),
    ...(options.creatorUrl ? { url: [options.creatorUrl] } : {}),
    ...(options.creatorEmail ? { contact: [{ email: options.creatorEmail }] } : {}),
  };
}

/** A UUID from a hash (version 5's layout): the same inputs give the same serial number. */
function uuidOf(hex: string): string {
  const b = Buffer.from(hex.slice(0, 32), 'hex');
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The primary component's name and version: the options, else the project a deps.json names, else the first file that needs signing. */
function primaryOf(inventory: ReleaseInventory, options: SbomOptions): { name: string; version: string; file: InventoryFile | undefined } {
  const byRef = inventory.project?.bomRef ? inventory.files.find((f) => f.bomRef === inventory.project!.bomRef) : undefined;
  // The add-in: an API program (it uses the vendor API itself), a library before a tool, else any assembly that needs signing.
  const api = inventory.files.filter((f) => f.audit?.assembly && (f.audit.role === 'direct' || f.audit.role === 'marked'));
  const main =
    byRef ??
    api.find((f) => /\.dll$/i.test(f.name)) ??
    api[0] ??
    inventory.files.find((f) => f.audit?.needsSigning && f.audit.assembly) ??
    inventory.files.find((f) => f.audit?.assembly);
  return {
    name: options.name ?? inventory.project?.id ?? main?.audit?.assembly?.name ?? 'release',
    version: options.version ?? main?.audit?.assembly?.version ?? inventory.project?.version ?? 'unknown',
    file: main,
  };
}

/** `JSON.stringify(value, null, 2)` moved in by `indent` (its first line stays where the caller puts it). */
const indented = (value: unknown, indent: string) => JSON.stringify(value, null, 2).replaceAll('\n', `\n${indent}`);
/** localeCompare's order, from one collator (each localeCompare call makes its own). */
const byRef = new Intl.Collator().compare;

/**
 * The SBOM of the release as CycloneDX JSON text, in pieces: the metadata, then a component at a time (each made as
 * the library's model and normalized by its JSON normalizer, as its JsonSerializer does for a whole Bom), then the
 * dependency graph and the compositions, so that the SBOM of a release of any size is never one model or one string
 * in memory. The text is JSON.stringify's with 2 spaces. `timestamp` null leaves `metadata.timestamp` out: the same
 * inputs then give the same bytes (the serial number is derived from the content and the timestamp).
 */
export function* formatAuditSbomPieces(
  inventory: ReleaseInventory,
  settings: AuditReport['settings'],
  options: SbomOptions,
  timestamp: string | null,
): Generator<string> {
  const vendor = settings.vendor;
  const spec = options.specVersion === '1.7' ? Spec.Spec1dot7 : Spec.Spec1dot6;
  const primary = primaryOf(inventory, options);
  const creator = creatorEntity({ creatorName: vendor, ...options });
  const serial = uuidOf(
    createHash('sha256')
      .update(JSON.stringify([VERSION, spec.version, timestamp, primary.name, primary.version, creator, inventory.files.map((f) => [f.name, f.sha512])]))
      .digest('hex'),
  );
  const bom = new Models.Bom({ serialNumber: `urn:uuid:${serial}`, version: 1 });
  if (timestamp) bom.metadata.timestamp = new Date(timestamp);
  // What `audit --verify-report` takes from the SBOM to audit the folder again.
  bom.metadata.properties.add(new Models.Property('signgate:vendor', vendor));
  for (const k of settings.keys) bom.metadata.properties.add(new Models.Property('signgate:key', `${k.optionId ?? 'none'}:${k.token}:${k.publicKey}`));
  bom.metadata.tools.components.add(
    new Models.Component(Enums.ComponentType.Application, 'signgate', {
      version: VERSION,
      externalReferences: new Models.ExternalReferenceRepository([
        new Models.ExternalReference('https://github.com/signgate/signgate', Enums.ExternalReferenceType.VCS),
      ]),
    }),
  );
  const root = new Models.Component(Enums.ComponentType.Library, primary.name, { bomRef: 'release', version: primary.version });
  const rootProps: [string, string][] = [
    ['bsi:component:filename', primary.file?.fileName ?? primary.name],
    ['bsi:component:executable', 'executable'],
    ['bsi:component:archive', 'no archive'],
    ['bsi:component:structured', 'structured'],
  ];
  if (primary.file) {
    root.hashes.set(Enums.HashAlgorithm['SHA-256'], primary.file.sha256);
    root.hashes.set(Enums.HashAlgorithm['SHA-512'], primary.file.sha512);
    rootProps.push(['signgate:mainFile', primary.file.bomRef]);
  }
  root.purl = `pkg:generic/${encodeURIComponent(vendor)}/${encodeURIComponent(primary.name)}@${encodeURIComponent(primary.version)}`;
  if (options.license) addLicence(root, options.license, rootProps);
  if (options.sourceUri) root.externalReferences.add(new Models.ExternalReference(options.sourceUri, Enums.ExternalReferenceType.SourceDistribution));
  if (options.downloadUri) root.externalReferences.add(new Models.ExternalReference(options.downloadUri, Enums.ExternalReferenceType.Distribution));
  for (const [name, value] of rootProps) root.properties.add(new Models.Property(name, value));
  bom.metadata.component = root;

  const factory = new Serialize.JSON.Normalize.Factory(spec);
  const normalizeOptions = { sortLists: true };
  // The Bom without its components: the library normalizes the head (schema, serial number, metadata, the tool).
  const head = factory.makeForBom().normalize(bom, normalizeOptions) as unknown as Json;
  const metadata = head.metadata as Json;
  metadata.manufacturer = creator;
  (metadata.component as Json).manufacturer = creator;
  delete head.components;
  delete head.dependencies;
  yield '{\n';
  for (const [key, value] of Object.entries(head)) if (value !== undefined) yield `  ${JSON.stringify(key)}: ${indented(value, '  ')},\n`;
  const components = factory.makeForComponent();
  // Each piece ends a line: the writer joins pieces into parts that end one.
  const files = inventory.files;
  yield files.length ? '  "components": [\n' : '  "components": [],\n';
  for (let i = 0; i < files.length; i++) {
    const { component, manufacturer } = fileComponent(files[i]!, vendor, options, options.license);
    const normalized = components.normalize(component, normalizeOptions) as unknown as Json;
    normalized.manufacturer = manufacturer;
    // The path in the release, as the evidence of where the file is (the name is bsi:component:filename).
    normalized.evidence = { ...((normalized.evidence as Json | undefined) ?? {}), occurrences: [{ location: files[i]!.name }] };
    yield `    ${indented(normalized, '    ')}${i < files.length - 1 ? ',' : ''}\n`;
  }
  if (files.length) yield '  ],\n';
  // The graph: every component with the components it depends on (the add-in on every file), as the library's
  // dependency-graph normalizer writes it (sorted, an empty dependsOn left out).
  const graph = [
    { ref: 'release', dependsOn: inventory.files.map((f) => f.bomRef) },
    ...inventory.files.map((f) => ({ ref: f.bomRef, dependsOn: [...f.dependsOn] })),
  ].sort((a, b) => byRef(a.ref, b.ref));
  yield '  "dependencies": [\n';
  for (let i = 0; i < graph.length; i++) {
    const { ref, dependsOn } = graph[i]!;
    yield `    ${indented({ ref, dependsOn: dependsOn.length ? dependsOn.sort(byRef) : undefined }, '    ')}${i < graph.length - 1 ? ',' : ''}\n`;
  }
  yield '  ],\n';
  // What is complete: the files (every file of the release is a component) and the dependencies of the files whose
  // references are all shipped; what is not: those with references to assemblies the release does not ship (the
  // framework, the host's API), each named in signgate:unresolvedReference.
  const incomplete = inventory.files.filter((f) => f.unresolved.length > 0 || f.kind === 'unreadable').map((f) => f.bomRef);
  const complete = inventory.files.filter((f) => f.unresolved.length === 0 && f.kind !== 'unreadable').map((f) => f.bomRef);
  const compositions = [
    { 'bom-ref': 'composition:files', aggregate: 'complete', assemblies: ['release', ...inventory.files.map((f) => f.bomRef)] },
    { 'bom-ref': 'composition:dependencies-complete', aggregate: 'complete', dependencies: ['release', ...complete] },
    ...(incomplete.length ? [{ 'bom-ref': 'composition:dependencies-incomplete', aggregate: 'incomplete', dependencies: incomplete }] : []),
  ];
  yield `  "compositions": ${indented(compositions, '  ')}\n}\n`;
}
