// signgate fix over the NuGet corpus: every assembly there without a strong name (none of them written here) is
// strong-named, references among them following, and each result is verified three ways: our verifier, Mono's
// sn -vf, and System.Reflection.Metadata reading it against the original (tools/srm-oracle --compare: only the
// intended changes). The SDK fixtures' unsigned library is fixed beside them. Then the loaders' verdict: .NET
// (tools/fix-host --load) and Mono (tools/mono-loader, built with mcs) load each output and its input by path, and
// must find the same MVID and manifest resources (same bytes) and the same full name but for the token.
// Needs the corpus, the .NET SDK and Mono: without them it skips, except in CI, where it fails.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { isSignGateError } from '../../src/core/errors.js';
import { getCertificateTable, parsePeImage } from '../../src/pe/pe-image.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { classifyStrongName, verifyStrongName } from '../../src/strongname/strong-name.js';
import { identityPublicKey, STRONG_NAME_SECTION, strongNameAssembly, unfixableReason } from '../../src/strongname/strong-name-writer.js';
import { STRONG_NAME_TAIL_SECTION } from '../../src/metadata/text-relayout.js';
import { appendSection } from '../../src/pe/pe-writer.js';
import { publicKeyToken } from '../../src/strongname/key-token.js';
import { fixture, fixturePath, has, hasMono, repoRoot } from '../helpers/fixtures.js';
import { corpusFiles, corpusMissing, runCorpusTests } from '../helpers/nuget-corpus.js';
import { buildSrmOracle, runJsonLines, srmCompare } from '../helpers/srm-oracle.js';
import { run } from '../sdk/dotnet.js';

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

/** A loader's verdict on one file (tools/fix-host --load, tools/mono-loader). */
interface LoadVerdict {
  readonly path: string;
  readonly ok: boolean;
  /** Mono: LoadFile, or ReflectionOnlyLoadFrom with the reason LoadFile gave. */
  readonly how?: string;
  readonly fullName?: string;
  readonly mvid?: string;
  /** Manifest resource name -> "<sha256> <length>" of its stream read to the end. */
  readonly resources?: Record<string, string>;
  readonly error?: string;
}

/** Runs a loader over the files (one a line on its stdin); its verdicts in the files' order. */
async function loadVerdicts(command: string, args: readonly string[], files: readonly string[]): Promise<LoadVerdict[]> {
  const verdicts = await runJsonLines<LoadVerdict>(command, args, files);
  if (verdicts.length !== files.length) throw new Error(`${command} ${args.join(' ')} gave ${verdicts.length} verdicts for ${files.length} files`);
  return verdicts;
}

/**
 * What differs between a loader's verdicts on an input and on its fixed output, beyond the token the fix gives:
 * an output must load where its input loads, the same way, with the same MVID and resource bytes.
 */
function loadDifferences(input: LoadVerdict, output: LoadVerdict): string[] {
  if (!input.ok)
    return output.ok || output.error!.split(':')[0] === input.error!.split(':')[0]
      ? []
      : [`the input was refused with ${input.error}, the output with ${output.error}`];
  if (!output.ok) return [`the input loads, the output does not: ${output.error}`];
  const found: string[] = [];
  const expectedName = input.fullName!.replace(/PublicKeyToken=null$/, `PublicKeyToken=${token}`);
  if (output.fullName !== expectedName) found.push(`full name ${output.fullName}, expected ${expectedName}`);
  if (output.how !== input.how) found.push(`loaded by ${output.how}, the input by ${input.how}`);
  if (output.mvid !== input.mvid) found.push(`MVID ${output.mvid}, the input's ${input.mvid}`);
  if (JSON.stringify(output.resources) !== JSON.stringify(input.resources))
    found.push(`resources ${JSON.stringify(output.resources)}, the input's ${JSON.stringify(input.resources)}`);
  return found;
}

describe.skipIf(!runCorpusTests)('signgate fix over the NuGet corpus', () => {
  test('every unsigned assembly is strong-named, verified by us, by sn -vf and by SRM, and loaded by .NET and Mono', { timeout: 20 * 60_000 }, async () => {
    if (corpusMissing) throw new Error(`CI is set but ${corpusMissing}`);
    if (!hasMono || !has('mono') || !has('mcs')) throw new Error('Mono (sn, mono, mcs) is needed to verify and load the fixed corpus');
    await buildSrmOracle();
    const hostBuild = await run('dotnet', ['build', join(repoRoot, 'tools', 'fix-host'), '-c', 'Release', '--nologo', '-v', 'q'], { cwd: repoRoot });
    if (hostBuild.status !== 0) throw new Error(`building tools/fix-host failed:\n${hostBuild.output}`);
    const monoLoader = join(mkdtempSync(join(tmpdir(), 'signgate-mono-loader-')), 'mono-loader.exe');
    const monoBuild = await run('mcs', [`-out:${monoLoader}`, join(repoRoot, 'tools', 'mono-loader', 'MonoLoader.cs')], { cwd: repoRoot });
    if (monoBuild.status !== 0) throw new Error(`building tools/mono-loader with mcs failed:\n${monoBuild.output}`);
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
    const layouts = new Map<string, string>();
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
      const path =
        last === STRONG_NAME_SECTION
          ? 'new section (fallback)'
          : last === STRONG_NAME_TAIL_SECTION
            ? 'tail-moved'
            : result.bytes.length === inputSize
              ? 'in-place'
              : 'text-grown';
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
      layouts.set(target, path);
    }
    const fixMs = performance.now() - start;

    const refusedBySn = await snRefusals(pairs.map(([, fixed]) => fixed));
    expect(refusedBySn).toEqual([]);
    const compared = await srmCompare(pairs);
    const problems = compared
      .filter((c) => c.error !== null || (c.differences ?? []).length > 0)
      .map((c) => `${c.original}: ${c.error ?? c.differences!.join('; ')}`);
    expect(problems).toEqual([]);
    for (const c of compared) expect(c.identity, c.original).toMatch(new RegExp(`PublicKeyToken=${token}$`));
    const relaid = compared.filter((c) => c.relaid).length;

    // The loaders' verdict: each input, then each output, loaded alone by .NET and by Mono.
    const loadList = [...pairs.map(([input]) => input), ...pairs.map(([, fixed]) => fixed)];
    const loads: Record<string, { loaded: number; refusedAsInput: string[]; problems: string[]; reflectionOnly: number; resources: number }> = {};
    for (const [runtime, verdicts] of [
      ['.NET', await loadVerdicts('dotnet', [join(repoRoot, 'tools', 'fix-host', 'bin', 'Release', 'fix-host.dll'), '--load'], loadList)],
      ['Mono', await loadVerdicts('mono', [monoLoader], loadList)],
    ] as const) {
      const tally = { loaded: 0, refusedAsInput: [] as string[], problems: [] as string[], reflectionOnly: 0, resources: 0 };
      pairs.forEach(([input, fixed], i) => {
        const before = verdicts[i]!;
        const after = verdicts[pairs.length + i]!;
        if (after.how?.startsWith('ReflectionOnly')) tally.reflectionOnly++;
        tally.resources += Object.keys(after.resources ?? {}).length;
        if (after.ok) tally.loaded++;
        else if (!before.ok) tally.refusedAsInput.push(`${input}: ${after.error}`);
        for (const problem of loadDifferences(before, after)) tally.problems.push(`${runtime} ${fixed} (${layouts.get(fixed)}, from ${input}): ${problem}`);
      });
      loads[runtime] = tally;
    }
    expect(loads['Mono']!.problems).toEqual([]);
    expect(loads['.NET']!.problems).toEqual([]);
    console.log(
      `fixed ${unsigned.length} unsigned assemblies of ${inputs.length} in ${fixMs.toFixed(0)} ms; verified: ours ${unsigned.length}, sn -vf ${pairs.length - refusedBySn.length}, ` +
        `SRM equal but for the intended changes ${compared.length - problems.length} (${relaid} with the #Blob index widened); ` +
        `loaded: .NET ${loads['.NET']!.loaded}, Mono ${loads['Mono']!.loaded} (${loads['Mono']!.reflectionOnly} for reflection only) of ${pairs.length}, ` +
        `resource streams read and equal to the input's: .NET ${loads['.NET']!.resources}, Mono ${loads['Mono']!.resources} ` +
        `(refused as their inputs are: .NET ${loads['.NET']!.refusedAsInput.length}, Mono ${loads['Mono']!.refusedAsInput.length}); ` +
        `references given a token: ${referencesUpdated}; ` +
        `notes: ${JSON.stringify(Object.fromEntries(notes))}; layout: ${JSON.stringify(paths)}; median size change +${(median(growth) * 100).toFixed(1)}% ` +
        `(max +${(Math.max(...growth) * 100).toFixed(1)}%; the metadata in a new section: median +${(median(growthBefore) * 100).toFixed(1)}%, max +${(Math.max(...growthBefore) * 100).toFixed(1)}%)`,
    );
    // The metadata goes where it was for nearly every file: a file grows by a FileAlignment unit at most, usually.
    for (const [runtime, { refusedAsInput }] of Object.entries(loads)) {
      if (refusedAsInput.length > 0) console.log(`refused by ${runtime} as their inputs are:\n${refusedAsInput.join('\n')}`);
    }
    expect(paths['new section (fallback)']).toBeLessThanOrEqual(unsigned.length / 10);
    expect(median(growth)).toBeLessThan(median(growthBefore) / 2);
  });
});
