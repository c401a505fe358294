// The pipeline that check, audit and sign's pre-flight stand on (src/workflows/pipeline/index.ts): one entry that
// reads the inputs, asks its consumer what the rounds run with, and produces check results or audit records, the
// same whichever way the inputs were read (held, on demand, shared with worker threads).
import { describe, expect, test } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { formatAuditJson } from '../../src/report/audit-json.js';
import { runPipeline, type ReadFiles } from '../../src/workflows/pipeline/index.js';
import type { CheckSettings } from '../../src/rules/types.js';
import { fixturePath } from '../helpers/fixtures.js';

const keys = [fixturePath('test-keys/12345_public.snk')];
const paths = [fixturePath('addin'), fixturePath('modules/changed-module'), fixturePath('variants/native.dll'), fixturePath('corrupt/bad-metadata-signature.dll')];
const options = { paths, keys, vendor: 'Contoso' };
const auditOf = (settings: CheckSettings) => ({ settings, jobs: new Map(), jobSource: { ledger: 'test', found: false } });
const shared = (read: ReadFiles) => read.inputs.every((i) => i.bytes.buffer instanceof SharedArrayBuffer);

describe('the pipeline', () => {
  test('check results: the same whether the inputs are held, read on demand or shared with two worker threads; prepare is asked once, after the reading', async () => {
    const runs = [];
    for (const [threads, readAtOnceBytes] of [[0, Number.MAX_SAFE_INTEGER], [0, 0], [2, 0]] as const) {
      const asked: ReadFiles[] = [];
      runs.push(
        await runPipeline(
          { options: { ...options, threads, readAtOnceBytes } },
          {
            produce: 'check-results',
            prepare: (read) => {
              asked.push(read);
              return { settings: read.settings, severities: read.severities };
            },
          },
        ),
      );
      expect(asked).toHaveLength(1);
      expect(asked[0]!.inputs.length).toBeGreaterThan(8);
    }
    const [held, onDemand, pooled] = runs;
    expect([held!.read.onDemand, held!.read.threads, shared(held!.read)]).toEqual([false, 0, false]);
    expect([onDemand!.read.onDemand, onDemand!.read.threads]).toEqual([true, 0]);
    expect([pooled!.read.onDemand, pooled!.read.threads, shared(pooled!.read)]).toEqual([false, 2, true]);
    expect(held!.result.findings.length).toBeGreaterThan(0);
    expect(JSON.stringify(onDemand!.result)).toBe(JSON.stringify(held!.result));
    expect(JSON.stringify(pooled!.result)).toBe(JSON.stringify(held!.result));
  });

  test('audit records: the same from the options and from files with the settings given whole (verify-report), held, on demand or in threads', async () => {
    const fromOptions = await runPipeline({ options: { ...options, threads: 0 } }, { produce: 'audit-records', prepare: (read) => auditOf(read.settings) });
    const expected = formatAuditJson(fromOptions.result, null);
    for (const [threads, readAtOnceBytes] of [[0, 0], [2, Number.MAX_SAFE_INTEGER]] as const) {
      const run = await runPipeline({ files: { paths, root: null, threads, readAtOnceBytes } }, { produce: 'audit-records', prepare: () => auditOf(fromOptions.read.settings) });
      expect(run.read.onDemand).toBe(threads === 0);
      expect(formatAuditJson(run.result, null)).toBe(expected);
    }
  });

  test("held (sign's pre-flight): read into memory and checked here whatever threads says; prepare may leave inputs out", async () => {
    const run = await runPipeline(
      { options: { ...options, threads: 2, readAtOnceBytes: 0 } },
      { produce: 'check-results', reading: 'held', prepare: (read) => ({ settings: read.settings, inputs: read.inputs.filter((i) => i.path.includes('/addin/')) }) },
    );
    expect(run.read.onDemand).toBe(false);
    expect(shared(run.read)).toBe(false);
    expect(run.result.files.map((f) => f.path).sort()).toEqual(run.read.inputs.filter((i) => i.path.includes('/addin/')).map((i) => i.path).sort());
  });

  test('what prepare throws stops the pipeline before any file is parsed', async () => {
    await expect(runPipeline({ options }, { produce: 'check-results', prepare: () => { throw new UsageError('the consumer says no'); } })).rejects.toThrow('the consumer says no');
  });
});
