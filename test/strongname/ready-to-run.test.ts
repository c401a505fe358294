// ReadyToRun images (the .NET shared framework as installed with the SDK, none of it written here): recognised by
// their READYTORUN header, and explained wherever the strong-name state is shown; the state stays what the bytes say.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseCorHeader, readReadyToRunHeader } from '../../src/pe/cor-header.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { classifyStrongName } from '../../src/strongname/strong-name.js';
import { fixture, fixturePath, runCli } from '../helpers/fixtures.js';
import { hasDotnet, requireDotnet, runDotnetTests } from '../sdk/dotnet.js';

/** The folder of the newest installed Microsoft.AspNetCore.App shared framework. */
function aspNetCoreFolder(): string {
  const lines = execFileSync('dotnet', ['--list-runtimes'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.startsWith('Microsoft.AspNetCore.App '));
  const m = /^(\S+) (\S+) \[(.*)\]$/.exec(lines.at(-1)!.trim())!;
  return join(m[3]!, m[2]!);
}

describe('an IL-only image has no ReadyToRun header', () => {
  test('the fixtures', () => {
    for (const name of ['assemblies/signed-1024.dll', 'assemblies/unsigned.dll', 'addin/SampleAddin.dll']) {
      const module = readModule(fixture(name));
      expect(readReadyToRunHeader(module.image, module.corHeader), name).toBeNull();
      expect(classifyStrongName(module).details).not.toContain('ready-to-run');
    }
  });
});

describe.skipIf(!runDotnetTests)('the installed shared framework', () => {
  test('ReadyToRun files are recognised; a stale or public-signed slot is explained in verify, inspect and the audit', () => {
    requireDotnet();
    if (!hasDotnet) return;
    const folder = aspNetCoreFolder();
    const states = new Map<string, string>();
    let readyToRun = 0;
    for (const name of readdirSync(folder).filter((f) => f.endsWith('.dll'))) {
      const module = readModule(readFileSync(join(folder, name)));
      const header = readReadyToRunHeader(module.image, parseCorHeader(module.image));
      if (!header) continue;
      readyToRun++;
      expect(header.majorVersion, name).toBeGreaterThanOrEqual(5);
      const status = classifyStrongName(module);
      if (status.state === 'invalid-signature' || status.state === 'public-signed') {
        expect(status.details, name).toContain('ready-to-run');
        if (!states.has(status.state)) states.set(status.state, name);
      }
    }
    expect(readyToRun).toBeGreaterThan(50);
    expect(states.get('invalid-signature')).toBeDefined();

    const release = mkdtempSync(join(tmpdir(), 'signgate-r2r-'));
    copyFileSync(fixturePath('addin/SampleAddin.dll'), join(release, 'SampleAddin.dll'));
    copyFileSync(fixturePath('vendor/Contoso.AddinApi.dll'), join(release, 'Contoso.AddinApi.dll'));
    const stale = states.get('invalid-signature')!;
    copyFileSync(join(folder, stale), join(release, stale));

    const verified = runCli(['verify', join(release, stale)]);
    expect(verified.status).toBe(1); // the state stays what the bytes say
    expect(verified.stdout).toContain('precompiled to native code (ReadyToRun, by crossgen)');
    expect(verified.stdout).toMatch(/its Authenticode signature: valid, signer [^,]*.*O=Microsoft Corporation/);
    expect(runCli(['inspect', join(release, stale)]).stdout).toContain('ReadyToRun');

    const audit = runCli(['audit', release, '--key', fixturePath('test-keys/12345_public.snk'), '--vendor', 'Contoso', '--json']);
    const report = JSON.parse(audit.stdout) as { files: { path: string; outcome: string; verdict: string; findings: { rule: string }[] }[] };
    const file = report.files.find((f) => f.path.endsWith(stale))!;
    expect(file.outcome).toBe('not-required');
    expect(file.findings).toEqual([]);
    expect(file.verdict).toMatch(
      /precompiled \(ReadyToRun\) after signing, so no strong-name signature covers it: its Authenticode signature by .*Microsoft Corporation.* is valid/,
    );
  });
});
