// The engine under check, audit, sign and the service (src/engine/): one path for every runner, the same result
// whichever way the inputs were read (held, read when needed, shared with worker threads), with the product passed in.
import { describe, expect, test } from 'vitest';
import { auditProduct } from '../../src/audit/audit-product.js';
import { isFileToRead, inPool, inThisThread, runEngine, type EngineInput, type Product } from '../../src/engine/index.js';
import { formatAuditJson } from '../../src/report/audit-json.js';
import { checkProduct } from '../../src/rules/check-product.js';
import type { FileFacts } from '../../src/rules/types.js';
import { BOUNDED, engineRunner, prepareCheck, readFiles, type ReadFiles } from '../../src/workflows/pipeline/index.js';
import { fixturePath } from '../helpers/fixtures.js';

const keys = [fixturePath('test-keys/12345_public.snk')];
const paths = [
  fixturePath('addin'),
  fixturePath('modules/changed-module'),
  fixturePath('variants/native.dll'),
  fixturePath('corrupt/bad-metadata-signature.dll'),
];
const options = { paths, keys, vendor: 'Contoso' };
const shared = (read: ReadFiles) => read.inputs.every((i) => !isFileToRead(i) && i.bytes.buffer instanceof SharedArrayBuffer);

describe('the engine', () => {
  test('check results: the same whether the inputs are held, read when needed or shared with two worker threads', async () => {
    const runs = [];
    for (const [threads, readAtOnceBytes] of [
      [0, Number.MAX_SAFE_INTEGER],
      [0, 0],
      [2, 0],
    ] as const) {
      const read = await prepareCheck({ ...options, threads, readAtOnceBytes }, BOUNDED);
      expect(read.inputs.length).toBeGreaterThan(8);
      runs.push({
        read,
        result: await runEngine(checkProduct({ settings: read.settings, severities: read.severities }), read.inputs, await engineRunner(read)),
      });
    }
    const [held, onDemand, pooled] = runs;
    expect([held!.read.onDemand, held!.read.threads, shared(held!.read)]).toEqual([false, 0, false]);
    expect([onDemand!.read.onDemand, onDemand!.read.threads, onDemand!.read.inputs.every(isFileToRead)]).toEqual([true, 0, true]);
    expect([pooled!.read.onDemand, pooled!.read.threads, shared(pooled!.read)]).toEqual([false, 2, true]);
    expect(held!.result.findings.length).toBeGreaterThan(0);
    expect(JSON.stringify(onDemand!.result)).toBe(JSON.stringify(held!.result));
    expect(JSON.stringify(pooled!.result)).toBe(JSON.stringify(held!.result));
  });

  test('audit records: the same from the options and from files with the settings given whole (verify-report), held, read when needed or in threads', async () => {
    const first = await prepareCheck({ ...options, threads: 0 }, BOUNDED);
    const auditOf = { settings: first.settings, jobs: new Map(), jobSource: { ledger: 'test', found: false } };
    const expected = formatAuditJson(await runEngine(auditProduct(auditOf), first.inputs, inThisThread()), null);
    for (const [threads, readAtOnceBytes] of [
      [0, 0],
      [2, Number.MAX_SAFE_INTEGER],
    ] as const) {
      const read = await readFiles({ paths, root: null, threads, readAtOnceBytes }, BOUNDED);
      expect(read.onDemand).toBe(threads === 0);
      expect(formatAuditJson(await runEngine(auditProduct(auditOf), read.inputs, await engineRunner(read)), null)).toBe(expected);
    }
  });

  test("held (sign's pre-flight): read into memory whatever threads says, and checked here", async () => {
    const read = await prepareCheck({ ...options, threads: 2, readAtOnceBytes: 0 });
    expect(read.onDemand).toBe(false);
    expect(shared(read)).toBe(false);
    expect(read.inputs.some(isFileToRead)).toBe(false);
  });

  test('a product passed in: its per-file step sees each file with its netmodules, its assembly sees every result; the runner is closed', async () => {
    const read = await prepareCheck({ ...options, threads: 0 });
    const seen: string[] = [];
    let closed = 0;
    const runner = inThisThread();
    const counting = { ...runner, close: async () => void closed++ };
    const product: Product<{ readonly tag: string }, string, Map<string, string>> = {
      module: 'test-only',
      settings: read.settings,
      options: { tag: 'x' },
      everyFile: false,
      perFile: (facts: FileFacts, near, _settings, o) => {
        seen.push(facts.input.path);
        return `${o.tag}:${near.size}`;
      },
      assemble: (_facts, perFile) => new Map(perFile),
    };
    const result = await runEngine(product, read.inputs as EngineInput[], counting);
    expect(seen.sort()).toEqual(read.inputs.map((i) => i.path).sort());
    expect([...result.keys()].sort()).toEqual(seen);
    // The manifest module of the multi-module assembly sees its netmodule beside it.
    expect([...result].find(([path]) => path.endsWith('ModuleAddin.dll'))![1]).toBe('x:2');
    expect(closed).toBe(1);
  });

  test('what a task throws stops the engine, and the pool is closed once every task settled', async () => {
    const read = await prepareCheck({ ...options, threads: 0 });
    const pool = await inPool(1);
    let closed = false;
    const closing = {
      ...pool,
      close: async () => {
        closed = true;
        await pool.close();
      },
    };
    const failing = { ...checkProduct({ settings: read.settings }), module: 'no/such-module' };
    await expect(runEngine(failing, read.inputs, closing)).rejects.toThrow(/no\/such-module/);
    expect(closed).toBe(true);
  });
});
