// keepHeapSmall's pace (runtime/heap.ts) must outlive a worker thread's start: Node sets V8's flags back when it
// makes a thread's isolate (Node 20: the main thread's young generation then grows to 32 MB, V8's default), so the
// thread pools set the recorded flags again (runtime/v8-flags.ts reapplyV8Flags). Each case runs in a process of its
// own. The bound is a quarter of the young generation a process without the pace reaches: V8's sizes differ between
// Node versions (Node 20: 32 MB by default, 2 MB with the pace; Node 24: 128 MB by default, 8-19 MB with the pace).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'signgate-pace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const dist = (module: string) => JSON.stringify(pathToFileURL(join(process.cwd(), 'dist', `${module}.js`)).href);

/** The young generation's largest size (bytes) while objects survive a while, after `start` ran. */
function youngGenerationAfter(start: string, pace = true): number {
  const script = `
    const v8 = await import('node:v8');
    const { keepHeapSmall } = await import(${dist('runtime/heap')});
    if (${pace}) keepHeapSmall();
    ${start}
    const keep = [];
    let most = 0;
    for (let round = 0; round < 100; round++) {
      const objects = [];
      for (let i = 0; i < 20000; i++) objects.push({ i, s: 'x' + i });
      keep.push(objects);
      if (keep.length > 20) keep.shift();
      most = Math.max(most, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
    }
    console.log(most);
  `;
  const file = join(dir, `pace-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, script);
  return Number(execFileSync(process.execPath, [file], { encoding: 'utf8' }).trim());
}

describe("a thread's start keeps the process's heap pace", () => {
  const files = ['assemblies/unsigned.dll', 'assemblies/signed-2048.dll'].map((f) => ({ absolutePath: fixturePath(f), displayPath: f }));
  let bound = 0;
  beforeAll(() => {
    const unpaced = youngGenerationAfter('', false);
    bound = unpaced / 4;
    // The yardstick: the pace alone keeps the young generation well under the bound.
    expect(youngGenerationAfter('')).toBeLessThanOrEqual(bound);
  });

  test('a bare worker thread, then the flags set again', () => {
    const bare = `const { Worker } = await import('node:worker_threads'); const { once } = await import('node:events');
      const w = new Worker('setTimeout(() => {}, 100)', { eval: true }); await once(w, 'online');`;
    // Node 20 sets the flags back when a thread starts (the reason for reapplyV8Flags); Node 24 keeps them.
    if (process.versions.node.startsWith('20.')) expect(youngGenerationAfter(bare)).toBeGreaterThan(bound);
    const reapply = `const { reapplyV8Flags } = await import(${dist('runtime/v8-flags')}); reapplyV8Flags();`;
    expect(youngGenerationAfter(`${bare} ${reapply}`)).toBeLessThanOrEqual(bound);
  });

  test('after the scan threads of inspect', () => {
    const scan = `const { scanFiles } = await import(${dist('workflows/scan')});
      for await (const r of scanFiles('inspect', ${JSON.stringify(files)}, { threads: 1 })) if (!r) throw new Error('no record');`;
    expect(youngGenerationAfter(scan)).toBeLessThanOrEqual(bound);
  });

  test("after the engine's pool", () => {
    const pool = `const { inPool } = await import(${dist('engine/runner')}); const runner = await inPool(1);
      await runner.run({ kind: 'nothing' }).catch(() => {}); await runner.close();`;
    expect(youngGenerationAfter(pool)).toBeLessThanOrEqual(bound);
  });
});
