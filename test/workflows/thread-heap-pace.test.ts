// keepHeapSmall's pace (runtime/heap.ts) must outlive a worker thread's start: Node sets V8's flags back when it
// makes a thread's isolate (Node 20: the main thread's young generation then grows to 32 MB), so the thread pools
// set the recorded flags again (runtime/v8-flags.ts reapplyV8Flags). Each case runs in a process of its own.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { fixturePath } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'signgate-pace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const dist = (module: string) => JSON.stringify(pathToFileURL(join(process.cwd(), 'dist', `${module}.js`)).href);

/** The young generation's largest size (bytes) while objects survive a while, after `start` ran. */
function youngGenerationAfter(start: string): number {
  const script = `
    const v8 = await import('node:v8');
    const { keepHeapSmall } = await import(${dist('runtime/heap')});
    keepHeapSmall();
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

  test('the yardstick: a bare worker thread sets the pace back, and setting the flags again restores it', () => {
    const bare = `const { Worker } = await import('node:worker_threads'); const { once } = await import('node:events');
      const w = new Worker('setTimeout(() => {}, 100)', { eval: true }); await once(w, 'online');`;
    expect(youngGenerationAfter(bare)).toBeGreaterThan(8 << 20);
    const { reapply } = { reapply: `const { reapplyV8Flags } = await import(${dist('runtime/v8-flags')}); reapplyV8Flags();` };
    expect(youngGenerationAfter(`${bare} ${reapply}`)).toBeLessThanOrEqual(4 << 20);
  });

  test('after the scan threads of inspect', () => {
    const scan = `const { scanFiles } = await import(${dist('workflows/scan')});
      for await (const r of scanFiles('inspect', ${JSON.stringify(files)}, { threads: 1 })) if (!r) throw new Error('no record');`;
    expect(youngGenerationAfter(scan)).toBeLessThanOrEqual(4 << 20);
  });

  test("after the engine's pool", () => {
    const pool = `const { inPool } = await import(${dist('engine/runner')}); const runner = await inPool(1);
      await runner.run({ kind: 'nothing' }).catch(() => {}); await runner.close();`;
    expect(youngGenerationAfter(pool)).toBeLessThanOrEqual(4 << 20);
  });
});
