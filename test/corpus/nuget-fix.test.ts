// signgate fix over the NuGet corpus: every assembly there without a strong name (none of them written here) is
// strong-named, references among them following, and each result is verified three ways: our verifier, Mono's
// sn -vf, and System.Reflection.Metadata reading it against the original (tools/srm-oracle --compare: only the
// intended changes). The SDK fixtures' unsigned library is fixed beside them.
// Needs the corpus, the .NET SDK and Mono: without them it skips, except in CI, where it fails.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { isSignGateError } from '../../src/core/errors.js';
import { getCertificateTable, parsePeImage } from '../../src/pe/pe-image.js';
import { readModule } from '../../src/strongname/assembly-info.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { classifyStrongName, verifyStrongName } from '../../src/strongname/strong-name.js';
import { identityPublicKey, STRONG_NAME_SECTION, strongNameAssembly, unfixableReason } from '../../src/strongname/strong-name-writer.js';
import { STRONG_NAME_TAIL_SECTION } from '../../src/strongname/text-relayout.js';
import { appendSection } from '../../src/pe/pe-writer.js';
import { publicKeyToken } from '../../src/strongname/token.js';
import { fixture, fixturePath, hasMono } from '../helpers/fixtures.js';
import { corpusFiles, corpusMissing, runCorpusTests } from '../helpers/nuget-corpus.js';
import { buildSrmOracle, srmCompare } from '../helpers/srm-oracle.js';

const key = parseStrongNameKeyFile(fixture('test-keys/other_keypair.snk'));
const token = publicKeyToken(key.publicKey.blob);

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Mono's sn -vf on each file, two at a time; the files it refuses, with its words. */
async function snRefusals(files: readonly string[]): Promise<string[]> {
  const refused: string[] = [];
  const queue = [...files];
  const worker = async () => {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const f = file;
      const { status, output } = await new Promise<{ status: number | null; output: string }>((resolve, reject) => {
        const child = spawn('sn', ['-q', '-vf', f]);
        let output = '';
        child.stdout.on('data', (d: Buffer) => (output += d.toString()));
        child.stderr.on('data', (d: Buffer) => (output += d.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ status: code, output }));
      });
      if (status !== 0) refused.push(`${f}: ${output.trim()}`);
    }
  };
  await Promise.all([worker(), worker()]);
  return refused;
}

describe.skipIf(!runCorpusTests)('signgate fix over the NuGet corpus', () => {
  test('every unsigned assembly is strong-named and verified by us, by sn -vf and by SRM', { timeout: 20 * 60_000 }, async () => {
    if (corpusMissing) throw new Error(`CI is set but ${corpusMissing}`);
    if (!hasMono) throw new Error('Mono sn is needed to verify the fixed corpus');
    await buildSrmOracle();
    const inputs = [...corpusFiles(), fixturePath('sdk/bin/wrong-turns/UnsignedReference/UnsignedLib.dll')];
    const unsigned: { path: string; bytes: Uint8Array; name: string }[] = [];
    for (const path of inputs) {
      const bytes = new Uint8Array(readFileSync(path));
      let module;
      try {
        module = readModule(bytes);
      } catch (error) {
        if (isSignGateError(error)) continue; // not managed: nothing to fix
        throw error;
      }
      if (unfixableReason(module) || classifyStrongName(module, { verify: false }).state !== 'unsigned') continue;
      unsigned.push({ path, bytes, name: module.assembly!.name });
    }
    expect(unsigned.length).toBeGreaterThanOrEqual(90);
    const identities = new Map(unsigned.map((u) => [u.name, identityPublicKey(key)] as const));

    const out = mkdtempSync(join(tmpdir(), 'signgate-fix-corpus-'));
    const pairs: [string, string][] = [];
    const outcomes = new Map<string, number>();
    const notes = new Map<string, number>();
    let referencesUpdated = 0;
    const growth: number[] = [];
    /** The growth of the layout fix wrote before: the whole metadata and the slot in a new section. */
    const growthBefore: number[] = [];
    const paths = { 'in-place': 0, 'text-grown': 0, 'tail-moved': 0, 'new section (fallback)': 0 };
    const start = performance.now();
    for (const [i, u] of unsigned.entries()) {
      const result = strongNameAssembly(u.bytes, { key, identities });
      expect(result.outcome, u.path).toBe('strong-named');
      outcomes.set(result.outcome, (outcomes.get(result.outcome) ?? 0) + 1);
      for (const n of result.notes) notes.set(n.kind, (notes.get(n.kind) ?? 0) + 1);
      referencesUpdated += result.changes.filter((c) => c.startsWith('reference ')).length;
      // Growth against the input without the Authenticode signature the fix removes.
      const inputSize = u.bytes.length - (getCertificateTable(parsePeImage(u.bytes))?.size ?? 0);
      growth.push(result.bytes.length / inputSize - 1);
      const before = parsePeImage(u.bytes);
      const after = parsePeImage(result.bytes);
      const last = after.sections.at(-1)!.name;
      const path = last === STRONG_NAME_SECTION ? 'new section (fallback)' : last === STRONG_NAME_TAIL_SECTION ? 'tail-moved' : result.bytes.length === inputSize ? 'in-place' : 'text-grown';
      paths[path]++;
      if (path !== 'new section (fallback)') expect(after.sections.length, u.path).toBe(before.sections.length + (path === 'tail-moved' ? 1 : 0));
      const metadataSize = readModule(result.bytes).corHeader.metadata.size;
      const unsignedInput = Uint8Array.from(u.bytes.subarray(0, getCertificateTable(before)?.fileOffset ?? u.bytes.length));
      unsignedInput.fill(0, before.dataDirectories[4]!.entryFileOffset, before.dataDirectories[4]!.entryFileOffset + 8);
      const old = appendSection(parsePeImage(unsignedInput), STRONG_NAME_SECTION, new Uint8Array(metadataSize + key.publicKey.bitLength / 8));
      growthBefore.push(old.bytes.length / inputSize - 1);
      const check = verifyStrongName(readModule(result.bytes), { expectedKey: key.publicKey });
      expect(check.valid, `${u.path}: ${check.reason}`).toBe(true);
      const folder = join(out, String(i));
      mkdirSync(folder);
      const target = join(folder, u.path.split(/[\\/]/).pop()!);
      writeFileSync(target, result.bytes);
      pairs.push([u.path, target]);
    }
    const fixMs = performance.now() - start;

    const refusedBySn = await snRefusals(pairs.map(([, fixed]) => fixed));
    expect(refusedBySn).toEqual([]);
    const compared = await srmCompare(pairs);
    const problems = compared.filter((c) => c.error !== null || (c.differences ?? []).length > 0).map((c) => `${c.original}: ${c.error ?? c.differences!.join('; ')}`);
    expect(problems).toEqual([]);
    for (const c of compared) expect(c.identity, c.original).toMatch(new RegExp(`PublicKeyToken=${token}$`));
    const relaid = compared.filter((c) => c.relaid).length;
    console.log(
      `fixed ${unsigned.length} unsigned assemblies of ${inputs.length} in ${fixMs.toFixed(0)} ms; verified: ours ${unsigned.length}, sn -vf ${pairs.length - refusedBySn.length}, ` +
        `SRM equal but for the intended changes ${compared.length - problems.length} (${relaid} with the #Blob index widened); references given a token: ${referencesUpdated}; ` +
        `notes: ${JSON.stringify(Object.fromEntries(notes))}; layout: ${JSON.stringify(paths)}; median size change +${(median(growth) * 100).toFixed(1)}% ` +
        `(max +${(Math.max(...growth) * 100).toFixed(1)}%; the metadata in a new section: median +${(median(growthBefore) * 100).toFixed(1)}%, max +${(Math.max(...growthBefore) * 100).toFixed(1)}%)`,
    );
    // The metadata goes where it was for nearly every file: a file grows by a FileAlignment unit at most, usually.
    expect(paths['new section (fallback)']).toBeLessThanOrEqual(unsigned.length / 10);
    expect(median(growth)).toBeLessThan(median(growthBefore) / 2);
  });
});
