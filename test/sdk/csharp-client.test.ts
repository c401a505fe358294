// A C# client generated from schemas/openapi.json by NSwag (tools/csharp-client/generator, NSwag.CodeGeneration.CSharp
// from NuGet), compiled with the SDK into a small program (tools/csharp-client/smoke) that runs upload -> status ->
// download -> delete against the reference service on 127.0.0.1. The downloaded package must hold the two
// assemblies signed with the organization's key. Needs the .NET SDK (fails in CI without it).
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { verifyStrongName } from '../../src/strongname/strong-name.js';
import { readZip } from '../../src/zip/read-zip.js';
import { fixturePath, repoRoot } from '../helpers/fixtures.js';
import { api, startServer, type TestServer } from '../helpers/server.js';
import { hasDotnet, requireDotnet, run, runDotnetTests } from './dotnet.js';

const GENERATOR = join(repoRoot, 'tools', 'csharp-client', 'generator');
const SMOKE = join(repoRoot, 'tools', 'csharp-client', 'smoke');
const key12345 = parseStrongNameKeyFile(readFileSync(fixturePath('test-keys/12345_public.snk'))).publicKey;

interface SmokeReport {
  licenses: number[];
  jobId: string;
  comment: string | null;
  statusLink: string;
  polls: number;
  assemblies: { fileName: string; state: string; messages: string[] }[];
  zipBytes: number;
  zipEntries: { name: string; length: number; sha256: string }[];
  afterDeleteStatus: number | null;
  afterDeleteTitle: string | null;
}

async function dotnet(args: string[], what: string): Promise<string> {
  const r = await run('dotnet', args, { cwd: repoRoot });
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status}):\n${r.output}`);
  return r.output;
}

describe.runIf(runDotnetTests)('the NSwag-generated C# client', () => {
  let server: TestServer;
  let work: string;
  let generatorOutput = '';
  beforeAll(async () => {
    server = await startServer();
    if (!hasDotnet) return; // each test then fails on requireDotnet(), as it must in CI
    work = mkdtempSync(join(tmpdir(), 'signgate-csharp-client-'));
    const generated = join(work, 'SigningServiceClient.cs');
    await dotnet(['build', GENERATOR, '-c', 'Release', '--nologo', '-v', 'q'], 'dotnet build tools/csharp-client/generator');
    generatorOutput = await dotnet(
      [join(GENERATOR, 'bin', 'Release', 'client-generator.dll'), join(repoRoot, 'schemas', 'openapi.json'), generated],
      'client-generator',
    );
    await dotnet(
      ['build', SMOKE, '-c', 'Release', '--nologo', '-v', 'q', `-p:GeneratedClient=${generated}`],
      'dotnet build tools/csharp-client/smoke with the generated client',
    );
  });
  afterAll(() => server.close());

  test('has a typed method per operationId and one Problem type for every error', () => {
    requireDotnet();
    expect(generatorOutput).toContain('(12 operations)');
    const code = readFileSync(join(work, 'SigningServiceClient.cs'), 'utf8');
    for (const method of [
      'ListLicensesAsync',
      'UploadAssembliesAsync',
      'ListJobsAsync',
      'GetJobStatusAsync',
      'DownloadJobResultAsync',
      'DeleteJobAsync',
      'UploadArchiveAsync',
      'DownloadArchiveResultAsync',
      'GetOptionPublicKeyAsync',
      'GetRecordCheckpointAsync',
      'GetRecordConsistencyAsync',
      'GetRecordPublicKeyAsync',
    ]) {
      expect(code).toMatch(new RegExp(`public virtual async System\\.Threading\\.Tasks\\.Task(<[^>]+>+)? ${method}\\(`));
    }
    for (const type of ['Problem', 'License', 'JobCreated', 'JobSummary', 'JobStatus', 'AssemblyStatus', 'JobMessage'])
      expect(code).toContain(`public partial class ${type}\n`);
    expect(code).toContain('public enum FileProcessingState');
    expect(code).toContain('throw new ApiException<Problem>(');
  });

  test("docs/clients.md's C# example compiles against the generated client", async () => {
    requireDotnet();
    const example = /```csharp\n([\s\S]*?)```/.exec(readFileSync(join(repoRoot, 'docs', 'clients.md'), 'utf8'));
    expect(example).not.toBeNull();
    const project = join(work, 'docs-example');
    mkdirSync(project);
    writeFileSync(join(project, 'Program.cs'), example![1]!);
    copyFileSync(join(work, 'SigningServiceClient.cs'), join(project, 'SigningServiceClient.cs'));
    writeFileSync(
      join(project, 'DocsExample.csproj'),
      '<Project Sdk="Microsoft.NET.Sdk"><PropertyGroup><OutputType>Exe</OutputType><TargetFramework>net10.0</TargetFramework>' +
        '<Nullable>enable</Nullable><ImplicitUsings>enable</ImplicitUsings><TreatWarningsAsErrors>true</TreatWarningsAsErrors></PropertyGroup></Project>',
    );
    await dotnet(['build', project, '-c', 'Release', '--nologo', '-v', 'q'], "dotnet build of docs/clients.md's example");
  });

  test('upload -> status -> download -> delete against the service on loopback', async () => {
    requireDotnet();
    const origin = `${new URL(server.baseUrl).origin}/`;
    const token = server.token();
    const zip = join(work, 'result.zip');
    const files = ['addin/SampleAddin.dll', 'addin/SampleAddin.Helpers.dll'].map(fixturePath);
    const output = await dotnet([join(SMOKE, 'bin', 'Release', 'client-smoke.dll'), origin, token, ...files, zip], 'client-smoke');
    expect(output).not.toContain(token);
    const report = JSON.parse(output) as SmokeReport;
    expect(report.licenses.sort()).toEqual([12345, 67890]);
    expect(report.jobId).toMatch(/^[0-9a-f-]{36}$/);
    expect(report.comment).toBe('uploaded by the NSwag-generated client');
    expect(report.statusLink).toBe(`${server.baseUrl}/assemblies/${report.jobId}/status`);
    expect(report.assemblies.map((a) => [a.fileName, a.state])).toEqual([
      ['SampleAddin.dll', 'Signed'],
      ['SampleAddin.Helpers.dll', 'Signed'],
    ]);
    // The package the client wrote: both assemblies, signed with option 12345's key, and the signing log.
    const bytes = readFileSync(zip);
    expect(bytes.length).toBe(report.zipBytes);
    const entries = await readZip(bytes);
    expect(entries.map((e) => e.name).sort()).toEqual(['SampleAddin.Helpers.dll', 'SampleAddin.dll', 'signing-log.txt']);
    // .NET's ZipFile reads the same entries, with the same content.
    const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
    expect(report.zipEntries).toEqual(entries.map((e) => ({ name: e.name, length: e.bytes.length, sha256: sha256(e.bytes) })));
    for (const e of entries.filter((x) => x.name.endsWith('.dll'))) {
      expect(verifyStrongName(readModule(e.bytes), { expectedKey: key12345 }).valid, e.name).toBe(true);
    }
    // Deleted: the client saw the 404 problem as ApiException<Problem>, and the service keeps nothing of the job.
    expect(report).toMatchObject({ afterDeleteStatus: 404, afterDeleteTitle: 'Not Found' });
    const jobs = (await (await api(server, '/assemblies', token)).json()) as { id: string }[];
    expect(jobs.map((j) => j.id)).not.toContain(report.jobId);
  });
});
