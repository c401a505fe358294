// Our reading of a corpus against System.Reflection.Metadata's (tools/srm-oracle): identity, signature slot,
// CorFlags, references, assembly-level attribute types, and the strong-name state, which the oracle decides with
// its own signature verification (tools/srm-oracle/StrongName.cs). Shared by the corpus tests.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseCorHeader, readReadyToRunHeader } from '../../src/pe/cor-header.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { inspectAssembly, type AssemblyInfo } from '../../src/strongname/assembly-info.js';
import { srmDescribe } from './srm-oracle.js';

interface OracleReference {
  name: string;
  version: string;
  culture: string;
  publicKeyOrToken: string | null;
  flags: number;
}

interface OracleView {
  path: string;
  managed?: boolean;
  error: string | null;
  strongNameState?: string;
  corFlags?: number;
  strongNameSignedFlag?: boolean;
  signatureSlot?: { rva: number; size: number; allZero: boolean } | null;
  identity?: { name: string; version: string; culture: string; publicKey: string | null; flags: number; hashAlgorithm: number } | null;
  references?: OracleReference[];
  attributes?: string[];
}

/** ECMA-335 II.6.2.1.3: the token is the last 8 bytes of the key's SHA-1, reversed. */
function tokenOf(publicKeyOrToken: string | null, flags: number): string | null {
  if (publicKeyOrToken === null) return null;
  if ((flags & 1) === 0) return publicKeyOrToken;
  return Buffer.from(createHash('sha1').update(Buffer.from(publicKeyOrToken, 'hex')).digest().subarray(-8))
    .reverse()
    .toString('hex');
}

const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
const table = (map: Map<string, number>) => Object.fromEntries([...map].sort(([a], [b]) => a.localeCompare(b)));

export interface Agreement {
  readonly disagreements: string[];
  /** Counts for the report: states, key algorithms, details, and shapes (ReadyToRun, ECMA key, ESN, satellites, reference assemblies, native). */
  readonly summary: Record<string, unknown>;
  readonly fullySigned: number;
}

/** Reads every file with signgate and with the oracle and lists each difference. */
export async function agreeWithSrm(files: readonly string[]): Promise<Agreement> {
  let start = performance.now();
  const oracle = await srmDescribe<OracleView>(files);
  const oracleMs = performance.now() - start;
  const disagreements: string[] = [];
  if (oracle.length !== files.length || oracle.some((o, i) => o.path !== files[i])) disagreements.push('the oracle did not answer one line per file in order');
  const states = new Map<string, number>();
  const algorithms = new Map<string, number>();
  const details = new Map<string, number>();
  const shapes = new Map<string, number>();
  let fullySigned = 0;
  start = performance.now();
  files.forEach((file, i) => {
    const theirs = oracle[i]!;
    const bytes = readFileSync(file);
    const ours: AssemblyInfo = inspectAssembly(bytes, file, { verify: true });
    const say = (what: string, a: unknown, b: unknown) => disagreements.push(`${file}: ${what}: signgate ${JSON.stringify(a)}, SRM ${JSON.stringify(b)}`);
    // Both refusing a file is agreement (a native library for Linux or macOS named *.dll is no PE image at all).
    if (ours.error && theirs.error) return count(shapes, 'unreadable to both');
    if (ours.error || theirs.error) return say('read', ours.error?.code ?? 'readable', theirs.error ?? 'readable');
    if (ours.managed !== theirs.managed) return say('managed', ours.managed, theirs.managed);
    if (!ours.managed) return count(shapes, 'native');
    if (ours.cli!.flags !== theirs.corFlags) say('CorFlags', ours.cli!.flags, theirs.corFlags);
    if (ours.cli!.strongNameSignedFlag !== theirs.strongNameSignedFlag) say('StrongNameSigned', ours.cli!.strongNameSignedFlag, theirs.strongNameSignedFlag);
    if (ours.strongName!.slotSize !== (theirs.signatureSlot?.size ?? null))
      say('signature slot size', ours.strongName!.slotSize, theirs.signatureSlot?.size ?? null);
    const id = theirs.identity ?? null;
    const mine = ours.assembly;
    if ((mine === null) !== (id === null)) return say('has an Assembly row', mine !== null, id !== null);
    if (mine && id) {
      if (mine.name !== id.name) say('name', mine.name, id.name);
      if (mine.version !== id.version) say('version', mine.version, id.version);
      if (mine.culture !== id.culture) say('culture', mine.culture, id.culture);
      if (mine.publicKey !== id.publicKey) say('public key', mine.publicKey, id.publicKey);
      if (mine.flags !== id.flags) say('flags', mine.flags, id.flags);
      if (mine.hashAlgId !== id.hashAlgorithm) say('HashAlgId', mine.hashAlgId, id.hashAlgorithm);
    }
    const refs = (theirs.references ?? []).map((r) => ({
      name: r.name,
      version: r.version,
      culture: r.culture,
      publicKeyToken: tokenOf(r.publicKeyOrToken, r.flags),
    }));
    if (JSON.stringify(ours.references) !== JSON.stringify(refs)) say('references', ours.references, refs);
    const attributes = ours.attributes.filter((a) => a.target === 'assembly').map((a) => a.type);
    if (JSON.stringify(attributes) !== JSON.stringify(theirs.attributes ?? [])) say('assembly attributes', attributes, theirs.attributes);

    // The strong-name state: the oracle verified the signature itself.
    const sn = ours.strongName!;
    if (sn.state !== theirs.strongNameState) say('strong-name state', `${sn.state} (${sn.description})`, theirs.strongNameState);
    count(states, sn.state);
    if (sn.state === 'signed') fullySigned++;
    if (sn.state !== 'unsigned')
      count(
        algorithms,
        `${sn.state === 'signed' ? 'signed' : 'other'} ${ours.assembly?.hashAlgorithm ?? 'unknown'}${sn.hashAlgorithm && sn.hashAlgorithm !== ours.assembly?.hashAlgorithm ? `, signed with ${sn.hashAlgorithm}` : ''}, ${sn.keyBits ?? '?'}-bit`,
      );
    for (const d of sn.details) count(details, d);
    const image = parsePeImage(bytes);
    if (readReadyToRunHeader(image, parseCorHeader(image))) count(shapes, 'ReadyToRun');
    if (sn.details.includes('ecma-key') || mine?.publicKeyToken === 'b77a5c561934e089') count(shapes, 'ECMA key');
    if (sn.details.includes('signature-key-attribute')) count(shapes, 'enhanced strong name');
    if (mine && mine.culture !== '') count(shapes, 'satellite');
    if (ours.attributes.some((a) => a.type === 'System.Runtime.CompilerServices.ReferenceAssemblyAttribute')) count(shapes, 'reference assembly');
  });
  const oursMs = performance.now() - start;
  return {
    disagreements,
    fullySigned,
    summary: {
      files: files.length,
      fullySigned,
      states: table(states),
      shapes: table(shapes),
      keyAlgorithms: table(algorithms),
      details: table(details),
      oracleSeconds: +(oracleMs / 1000).toFixed(1),
      signgateSeconds: +(oursMs / 1000).toFixed(1),
    },
  };
}
