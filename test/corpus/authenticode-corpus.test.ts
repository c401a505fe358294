// Authenticode over the NuGet corpus (`npm run corpus:nuget`): real signatures by Microsoft and others, with nested
// SHA-1/SHA-256 signatures and RFC 3161 timestamps. For a spread sample, every signature's signed and computed image
// hash must equal what osslsigncode verify prints, and every signature must verify here; over the whole corpus no
// file may be unreadable. (osslsigncode's own verdict also needs the publishers' roots, which this machine may not
// hold, so the digests are compared, not its final word.) Without the corpus it skips, except in CI, where it fails.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { readAuthenticode } from '../../src/authenticode/authenticode.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { hasOsslsigncode } from '../helpers/authenticode.js';

const run = promisify(execFile);
const CACHE = process.env.SIGNGATE_NUGET_CORPUS ?? join(homedir(), '.cache', 'signgate', 'nuget-corpus');
const LIST = join(CACHE, 'assemblies.txt');
const present = existsSync(LIST);
if (!present && process.env.CI) throw new Error(`CI is set but there is no NuGet corpus in ${CACHE}; .ci/run must run npm run corpus:nuget`);

/** Every "Current message digest" and "Calculated message digest" osslsigncode verify prints, in order. */
async function osslDigests(file: string): Promise<{ signed: string[]; calculated: string[] }> {
  let out: string;
  try {
    out = (await run('osslsigncode', ['verify', '-in', file], { maxBuffer: 16 << 20 })).stdout;
  } catch (error) {
    out = (error as { stdout?: string }).stdout ?? '';
  }
  const grab = (label: string) => [...out.matchAll(new RegExp(`^${label}\\s*:\\s*([0-9A-F]+)`, 'gm'))].map((m) => m[1]!);
  return { signed: grab('Current message digest'), calculated: grab('Calculated message digest') };
}

describe.skipIf(!present || !hasOsslsigncode)('Authenticode over the NuGet corpus', () => {
  test('every file reads; signed ones verify; image hashes agree with osslsigncode on a sample', { timeout: 20 * 60_000 }, async () => {
    const files = readFileSync(LIST, 'utf8').split('\n').filter(Boolean);
    const states: Record<string, number> = {};
    const sample: { file: string; hashes: { signed: string; computed: string | null }[] }[] = [];
    for (const [i, file] of files.entries()) {
      const bytes = new Uint8Array(readFileSync(file));
      // The corpus reaches runtimes/: Linux and macOS native libraries named *.dll are no PE image at all.
      if (bytes[0] !== 0x4d || bytes[1] !== 0x5a) {
        states['not PE'] = (states['not PE'] ?? 0) + 1;
        continue;
      }
      const info = readAuthenticode(parsePeImage(bytes));
      states[info.state] = (states[info.state] ?? 0) + 1;
      expect(info.error, file).toBeNull();
      if (info.state === 'absent') continue;
      expect(info.state, `${file}: ${info.reason}`).toBe('valid');
      if (i % 25 === 0) sample.push({ file, hashes: info.signatures.map((s) => ({ signed: s.signedImageHash, computed: s.computedImageHash })) });
    }
    expect(states.valid).toBeGreaterThan(100);
    expect(sample.length).toBeGreaterThan(20); // about 70 of the 1,760 signed files
    for (const { file, hashes } of sample) {
      const oracle = await osslDigests(file);
      expect(hashes.map((h) => h.signed).sort(), file).toEqual([...oracle.signed].sort());
      expect(hashes.map((h) => h.computed).sort(), file).toEqual([...oracle.calculated].sort());
    }
  });
});
