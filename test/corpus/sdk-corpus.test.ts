// Differential test over the installed .NET SDK's own files: the shared frameworks (ReadyToRun images: stale or
// public-signed strong names, Authenticode) and the targeting packs (reference assemblies), none of them written
// here, against System.Reflection.Metadata and the oracle's own signature verification (tools/srm-oracle).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { agreeWithSrm } from '../helpers/srm-agreement.js';
import { buildSrmOracle } from '../helpers/srm-oracle.js';
import { requireDotnet, runDotnetTests } from '../sdk/dotnet.js';

/** Every *.dll below `dir`. */
function dllsBelow(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) dllsBelow(path, out);
    else if (entry.isFile() && entry.name.toLowerCase().endsWith('.dll')) out.push(path);
  }
  return out;
}

describe.skipIf(!runDotnetTests)('agreement with System.Reflection.Metadata over the installed .NET SDK', () => {
  test('shared frameworks and targeting packs: every field and every strong-name state agree', async () => {
    requireDotnet();
    await buildSrmOracle();
    const runtime = execFileSync('dotnet', ['--list-runtimes'], { encoding: 'utf8' })
      .split('\n')
      .find((l) => l.startsWith('Microsoft.NETCore.App '))!;
    const shared = dirname(/\[(.*)\]/.exec(runtime)![1]!); // …/dotnet/shared
    const dotnetRoot = dirname(shared);
    const files = [...dllsBelow(shared), ...dllsBelow(join(dotnetRoot, 'packs'))].sort();
    expect(files.length).toBeGreaterThan(300);
    const agreement = await agreeWithSrm(files);
    console.log(JSON.stringify(agreement.summary, null, 2));
    expect(agreement.disagreements).toEqual([]);
    expect((agreement.summary.shapes as Record<string, number>).ReadyToRun).toBeGreaterThan(100);
  });
});
