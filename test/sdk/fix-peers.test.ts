// The peers that `npm run bench` times `signgate fix` against (tools/fix-peers: Mono.Cecil and dnlib from NuGet)
// build, and strong-name the SDK fixture's add-in and its unsigned library as Mono's sn -vf accepts, the add-in's
// reference given the library's token; a file that needs no change is copied as it is. Without those, the bench
// would time tools that do something else. Needs the .NET SDK (fails in CI without it) and Mono.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { publicKeyToken } from '../../src/strongname/key-token.js';
import { fixture, fixturePath, hasMono, repoRoot, runMono } from '../helpers/fixtures.js';
import { hasDotnet, requireDotnet, run, runDotnetTests } from './dotnet.js';

const KEY = fixturePath('test-keys/other_keypair.snk');
const token = publicKeyToken(parseStrongNameKeyFile(fixture('test-keys/other_keypair.snk')).publicKey.blob);
const FOLDER = fixturePath('sdk/bin/wrong-turns/UnsignedReference');
const SIGNED = fixturePath('assemblies/signed-1024.dll');

describe.runIf(runDotnetTests)('the fix peers of the bench', () => {
  beforeAll(async () => {
    if (!hasDotnet) return; // each test then fails on requireDotnet(), as it must in CI
    for (const peer of ['cecil', 'dnlib']) {
      const build = await run('dotnet', ['build', join(repoRoot, 'tools', 'fix-peers', peer), '-c', 'Release', '--nologo', '-v', 'q'], { cwd: repoRoot });
      if (build.status !== 0) throw new Error(`dotnet build tools/fix-peers/${peer} failed:\n${build.output}`);
    }
  }, 300_000);

  for (const peer of ['cecil', 'dnlib']) {
    test(`${peer}: strong-names the unsigned library, points the add-in at it, copies a signed file`, async () => {
      requireDotnet();
      if (!hasMono) throw new Error('Mono sn is needed to verify what the peer wrote');
      const out = mkdtempSync(join(tmpdir(), `signgate-fix-peer-${peer}-`));
      const inputs = [join(FOLDER, 'UnsignedLib.dll'), join(FOLDER, 'WrongTurn.UnsignedReference.dll'), SIGNED];
      const r = await run('dotnet', [join(repoRoot, 'tools', 'fix-peers', peer, 'bin', 'Release', `fix-peer-${peer}.dll`), KEY, out, ...inputs], {
        cwd: repoRoot,
      });
      expect(r.status, r.output).toBe(0);
      expect(r.output).toContain('UnsignedLib.dll: strong-named');
      expect(r.output).toContain('signed-1024.dll: copied');
      // The common folder of the inputs is fixtures/: each result is below out/ at its path from there.
      const lib = join(out, 'sdk', 'bin', 'wrong-turns', 'UnsignedReference', 'UnsignedLib.dll');
      const addin = join(out, 'sdk', 'bin', 'wrong-turns', 'UnsignedReference', 'WrongTurn.UnsignedReference.dll');
      for (const file of [lib, addin]) expect(runMono('sn', ['-q', '-vf', file]).status, file).toBe(0);
      expect(publicKeyToken(readModule(new Uint8Array(readFileSync(lib))).assembly!.publicKey)).toBe(token);
      const reference = readModule(new Uint8Array(readFileSync(addin))).assemblyReferences.find((a) => a.name === 'UnsignedLib')!;
      expect(Buffer.from(reference.publicKeyOrToken).toString('hex')).toBe(token);
      expect(readFileSync(join(out, 'assemblies', 'signed-1024.dll')).equals(readFileSync(SIGNED))).toBe(true);
    }, 120_000);
  }
});
