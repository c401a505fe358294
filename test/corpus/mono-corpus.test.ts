// Differential test over every regular *.dll/*.exe under /usr/lib/mono (assemblies none of us wrote):
// identity must equal `monodis --assembly`, the token `sn -T`, and the signature verdict `sn -vf`.
// Mono substitutes keys by token through machine.config; we apply the same map (parseMonoKeyMap).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { inspectAssembly, type AssemblyInfo } from '../../src/strongname/assembly-info.js';
import { parseMonoKeyMap } from '../../src/strongname/key-map.js';
import { hasMono } from '../helpers/fixtures.js';

const run = promisify(execFile);
const CORPUS = process.env.SIGNGATE_CORPUS ?? '/usr/lib/mono';
const MACHINE_CONFIG = '/etc/mono/4.5/machine.config';

function corpusFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) corpusFiles(path, out);
    else if (entry.isFile() && /\.(dll|exe)$/i.test(entry.name)) out.push(path);
  }
  return out;
}

async function pool<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i]!);
      }
    }),
  );
  return results;
}

interface MonoView {
  managed: boolean;
  name: string | null;
  version: string | null;
  culture: string | null;
  token: string | null;
  strongNamed: boolean;
}

async function output(cmd: string, args: string[]): Promise<string> {
  try {
    const r = await run(cmd, args, { maxBuffer: 1 << 24, timeout: 60_000 });
    return r.stdout + r.stderr;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return (e.stdout ?? '') + (e.stderr ?? '');
  }
}

async function monoView(file: string): Promise<MonoView> {
  const [dis, token, verify] = await Promise.all([output('monodis', ['--assembly', file]), output('sn', ['-T', file]), output('sn', ['-vf', file])]);
  const field = (label: string) => {
    const m = new RegExp(`^${label}:[ \\t]*(.*)$`, 'm').exec(dis);
    return m ? m[1]!.trim() : null;
  };
  return {
    managed: dis.includes('Assembly Table'),
    name: field('Name'),
    version: field('Version'),
    culture: field('Culture'),
    token: /Public Key Token: ([0-9a-f]{16})/.exec(token)?.[1] ?? null,
    strongNamed: / is strongnamed\./.test(verify),
  };
}

describe.skipIf(!hasMono)(`agreement with Mono over ${CORPUS}`, () => {
  test('identity, token and signature verdict agree on every file', { timeout: 30 * 60_000 }, async () => {
    const files = corpusFiles(CORPUS).sort();
    expect(files.length).toBeGreaterThan(1000);
    const keyMap = parseMonoKeyMap(readFileSync(MACHINE_CONFIG, 'utf8'));
    const mono = await pool(files, 6, monoView);
    const disagreements: string[] = [];
    let signed = 0;
    files.forEach((file, i) => {
      const ours: AssemblyInfo = inspectAssembly(readFileSync(file), file, { keyMap });
      const theirs = mono[i]!;
      const say = (what: string, a: unknown, b: unknown) => disagreements.push(`${file}: ${what}: signgate ${JSON.stringify(a)}, Mono ${JSON.stringify(b)}`);
      if (ours.error) return say('read', ours.error.code, 'readable');
      if (ours.managed !== theirs.managed) say('managed', ours.managed, theirs.managed);
      if (!ours.assembly) return;
      if (ours.assembly.name !== theirs.name) say('name', ours.assembly.name, theirs.name);
      if (ours.assembly.version !== theirs.version) say('version', ours.assembly.version, theirs.version);
      if (ours.assembly.culture !== theirs.culture) say('culture', ours.assembly.culture, theirs.culture);
      if (ours.assembly.publicKeyToken !== theirs.token) say('token', ours.assembly.publicKeyToken, theirs.token);
      const valid = ours.strongName?.state === 'signed';
      if (valid) signed++;
      if (valid !== theirs.strongNamed) say('signature', ours.strongName?.state, theirs.strongNamed ? 'strongnamed' : 'not strongnamed');
    });
    expect(disagreements).toEqual([]);
    // The corpus really exercises verification: Mono signs a few hundred of its assemblies.
    expect(signed).toBeGreaterThan(100);
  });
});
