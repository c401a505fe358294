// Small first-contact mistakes: a mistyped option gets a "did you mean"; the audit names a job only for files that
// job returned signed (a failed job's files, returned as uploaded, keep none).
import { describe, expect, test } from 'vitest';
import { jobsFromLedger } from '../../src/workflows/audit.js';
import type { Ledger, LedgerEntry } from '../../src/workflows/ledger.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturePath, runCli, runCliAsync } from '../helpers/fixtures.js';
import { startStandIn } from '../helpers/stand-in-service.js';

describe('first contact, the small things', () => {
  test('--vendr: did you mean --vendor; one suggestion for a dashed option yargs names twice', () => {
    const r = runCli(['check', fixturePath('addin'), '--vendr', 'Contoso', '--key', fixturePath('test-keys/12345_public.snk')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('hint: Did you mean --vendor for --vendr?');
    const sign = runCli(['sign', fixturePath('addin'), '--destinaton-path', 'out']);
    expect(sign.stderr).toContain('Did you mean --destination-path for --destinaton-path?');
    expect(sign.stderr).not.toContain('destinatonPath?');
  });

  test("the audit's job column: a file a failed job returned as uploaded keeps no job", () => {
    const entry = (jobId: string, verified: boolean): LedgerEntry => ({
      jobId,
      baseUrl: 'b',
      comment: null,
      createdAt: '2026-11-24T00:00:00Z',
      updatedAt: '',
      state: verified ? 'verified' : 'failed',
      files: [],
      results: [{ fileName: 'A.dll', state: verified ? 'Signed' : 'Error', verified, outputSha256: verified ? 'signed-hash' : 'unsigned-hash', messages: [] }],
    });
    const jobs = jobsFromLedger({ all: () => [entry('good', true), entry('failed', false)] } as unknown as Ledger);
    expect(jobs.get('signed-hash')?.jobId).toBe('good');
    expect(jobs.has('unsigned-hash')).toBe(false);
  });

  test('a job that signed nothing: no advice to Authenticode-sign what came back', async () => {
    const service = await startStandIn({
      status: (real) => ({ ...real, assemblies: (real.assemblies as Record<string, unknown>[]).map((a) => ({ ...a, fileProcessingState: 'Error' })) }),
    });
    try {
      const work = mkdtempSync(join(tmpdir(), 'signgate-nothing-signed-'));
      const r = await runCliAsync(
        [
          'sign',
          fixturePath('addin/SampleAddin.dll'),
          '--vendor',
          'Contoso',
          '--key',
          fixturePath('test-keys/12345_public.snk'),
          '--base-url',
          service.baseUrl,
          '--destination-path',
          join(work, 'out'),
          '--poll-interval',
          '20',
        ],
        {
          env: { SIGNGATE_ACCESS_TOKEN: 'sgt_test', SIGNGATE_CACHE_DIR: join(work, 'cache') },
        },
      );
      expect(r.status).toBe(1);
      expect(r.stdout).toContain('0 signed and verified, 1 failed');
      expect(r.stdout).not.toContain('Authenticode-sign');
    } finally {
      await service.close();
    }
  }, 60_000);
});
