// Differential test over the NuGet corpus (`npm run corpus:nuget`: every distinct lib/ and ref/ assembly of the
// packages in tools/nuget-corpus/packages.txt, none of them written here): identity, signature slot, CorFlags,
// references and assembly-level attribute types must equal what System.Reflection.Metadata reads
// (tools/srm-oracle); the strong-name state must be the one SRM's key, slot and flag imply, so every assembly
// that the corpus holds fully signed (key, flag and a non-zero slot) must verify.
// Needs the corpus and the .NET SDK: without either it skips, except in CI, where it fails.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { inspectAssembly, type AssemblyInfo } from '../../src/strongname/assembly-info.js';
import { corpusFiles, corpusMissing, runCorpusTests } from '../helpers/nuget-corpus.js';
import { buildSrmOracle, srmDescribe } from '../helpers/srm-oracle.js';

const problem = corpusMissing;
const runHere = runCorpusTests;
if (!runHere) console.warn(`skipping the NuGet corpus test: ${problem}`);

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
  return Buffer.from(createHash('sha1').update(Buffer.from(publicKeyOrToken, 'hex')).digest().subarray(-8)).reverse().toString('hex');
}

/**
 * Files where our reading differs from SRM's for a reason we stand by, by file name: the reason is the test's
 * record of the difference. Empty: on this corpus there is none.
 */
const EXPLAINED: ReadonlyMap<string, string> = new Map();

/**
 * The state SRM's facts imply: no key, unsigned; a key without a slot cannot verify; an empty slot is
 * public-signed with the flag and delay-signed without it; a filled slot must verify (the flag set, as every
 * signing tool leaves it; a filled slot with the flag clear would be signed too, with the detail flag-clear).
 */
function expectedState(o: OracleView): string {
  if (!o.identity?.publicKey) return 'unsigned';
  if (!o.signatureSlot) return 'invalid-signature';
  if (o.signatureSlot.allZero) return o.strongNameSignedFlag ? 'public-signed' : 'delay-signed';
  return 'signed';
}

const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
const table = (map: Map<string, number>) => Object.fromEntries([...map].sort(([a], [b]) => a.localeCompare(b)));

describe.skipIf(!runHere)('agreement with System.Reflection.Metadata over the NuGet corpus', () => {
  test('identity, slot, flags, references and attributes agree; every fully signed assembly verifies', { timeout: 20 * 60_000 }, async () => {
    if (problem) throw new Error(`CI is set but ${problem}`);
    await buildSrmOracle();
    const files = corpusFiles();
    expect(files.length).toBeGreaterThanOrEqual(1500);

    let start = performance.now();
    const oracle = await srmDescribe<OracleView>(files);
    const oracleMs = performance.now() - start;
    expect(oracle.map((o) => o.path)).toEqual(files);

    const disagreements: string[] = [];
    const explained: string[] = [];
    const states = new Map<string, number>();
    const algorithms = new Map<string, number>();
    const notes = new Map<string, number>();
    let fullySigned = 0;
    start = performance.now();
    files.forEach((file, i) => {
      const theirs = oracle[i]!;
      const ours: AssemblyInfo = inspectAssembly(readFileSync(file), file, { verify: true });
      const found: string[] = [];
      const say = (what: string, a: unknown, b: unknown) => found.push(`${file}: ${what}: signgate ${JSON.stringify(a)}, SRM ${JSON.stringify(b)}`);
      const compare = () => {
        if (ours.error || theirs.error) return say('read', ours.error?.code ?? 'readable', theirs.error ?? 'readable');
        if (ours.managed !== theirs.managed) return say('managed', ours.managed, theirs.managed);
        if (!ours.managed) return;
        if (ours.cli!.flags !== theirs.corFlags) say('CorFlags', ours.cli!.flags, theirs.corFlags);
        if (ours.cli!.strongNameSignedFlag !== theirs.strongNameSignedFlag) say('StrongNameSigned', ours.cli!.strongNameSignedFlag, theirs.strongNameSignedFlag);
        if (ours.strongName!.slotSize !== (theirs.signatureSlot?.size ?? null)) say('signature slot size', ours.strongName!.slotSize, theirs.signatureSlot?.size ?? null);
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
        const refs = (theirs.references ?? []).map((r) => ({ name: r.name, version: r.version, culture: r.culture, publicKeyToken: tokenOf(r.publicKeyOrToken, r.flags) }));
        if (JSON.stringify(ours.references) !== JSON.stringify(refs)) say('references', ours.references, refs);
        const attributes = ours.attributes.filter((a) => a.target === 'assembly').map((a) => a.type);
        if (JSON.stringify(attributes) !== JSON.stringify(theirs.attributes ?? [])) say('assembly attributes', attributes, theirs.attributes);
      };
      compare();
      const reason = EXPLAINED.get(file.slice(file.lastIndexOf('/') + 1));
      if (found.length && reason) explained.push(...found.map((f) => `${f} (${reason})`));
      else disagreements.push(...found);

      // Verification: SRM's slot and flag decide what the corpus holds fully signed; ours must verify it.
      const sn = ours.strongName;
      if (!sn) return;
      count(states, sn.state);
      if (sn.state !== 'unsigned') count(algorithms, `${sn.state === 'signed' ? 'signed' : 'other'} ${ours.assembly?.hashAlgorithm ?? 'unknown'}${sn.hashAlgorithm && sn.hashAlgorithm !== ours.assembly?.hashAlgorithm ? `, signed with ${sn.hashAlgorithm}` : ''}, ${sn.keyBits ?? '?'}-bit`);
      for (const detail of sn.details) count(notes, detail);
      const expected = expectedState(theirs);
      if (expected === 'signed') fullySigned++;
      if (sn.state !== expected) disagreements.push(`${file}: SRM's slot and flag make it ${expected} but signgate says ${sn.state}: ${sn.description}`);
    });
    const oursMs = performance.now() - start;

    console.log(
      JSON.stringify(
        { files: files.length, fullySigned, states: table(states), keyAlgorithms: table(algorithms), details: table(notes), explained: explained.length, oracleSeconds: +(oracleMs / 1000).toFixed(1), signgateSeconds: +(oursMs / 1000).toFixed(1) },
        null,
        2,
      ),
    );
    if (explained.length) console.log(explained.join('\n'));
    expect(disagreements).toEqual([]);
    // The corpus really exercises verification: most widely used packages ship signed assemblies.
    expect(fullySigned).toBeGreaterThan(1000);
  });
});
