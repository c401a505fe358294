// fixtures/sdk/manifest.json (the SDK fixtures' build: SDK version, command, each kept file's SHA-256) and the
// two ways the tests compare a folder with it.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fixturePath } from '../helpers/fixtures.js';

export const manifest: { sdk: string; command: string; files: { file: string; sha256: string }[] } = JSON.parse(
  readFileSync(fixturePath('sdk/manifest.json'), 'utf8'),
);

/** Every file under a folder, relative to it, with forward slashes. */
export function listFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir)
      .sort()
      .flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : [join(dir, n)]));
  return walk(root).map((p) => relative(root, p).split('\\').join('/'));
}

export const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');
