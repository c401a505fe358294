// Below workflows/, server/ and cli/, no module touches the file system: the library takes bytes, text or a reader
// (a function the caller gives), and the disk is read and written by the layers above (and the entries src/*.ts).
// The process helpers of runtime/ are the exception, each file named here with why it cannot do without.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { repoRoot } from './helpers/fixtures.js';

const src = join(repoRoot, 'src');
/** The layers that may read and write files. */
const FILE_LAYERS = ['workflows', 'server', 'cli'];
/** Modules of the other layers that import node:fs all the same, each with why. */
const ALLOWED_FS: Record<string, string> = {
  'runtime/version.ts':
    "the package's own version, from package.json beside the code (outside src/, so no module to import; scripts/build-sea.js inlines this very read)",
  'runtime/worker-module.ts':
    "a worker thread's compiled module must be there (dist/, else `npm run build` is named), and the cores idle now come from /proc (the runnable threads)",
};
const FS_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"](?:node:)?fs(?:\/promises)?['"]/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.c?ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('architecture: the file system', () => {
  const files = sourceFiles(src).map((f) => relative(src, f).split('\\').join('/'));

  test('no module below workflows/, server/ and cli/ imports node:fs (nor fs, node:fs/promises), except the listed ones', () => {
    const problems: string[] = [];
    for (const file of files) {
      if (!file.includes('/') || FILE_LAYERS.includes(file.split('/')[0]!) || file in ALLOWED_FS) continue;
      const text = readFileSync(join(src, file), 'utf8');
      for (const m of text.matchAll(FS_IMPORT)) {
        problems.push(`src/${file} imports ${m[0].trim()}: take bytes, text or a reader, and read the file in workflows/, server/ or cli/`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('every module the list lets import node:fs is there and does', () => {
    for (const file of Object.keys(ALLOWED_FS)) {
      expect(files, `src/${file} is listed in test/architecture-fs.test.ts but is no module of src/`).toContain(file);
      expect(
        readFileSync(join(src, file), 'utf8').match(FS_IMPORT),
        `src/${file} is listed in test/architecture-fs.test.ts but imports no node:fs`,
      ).not.toBeNull();
    }
  });

  test('the check sees every form of the import', () => {
    const forms = [
      "import { readFileSync } from 'node:fs';",
      "import type { FileHandle } from 'node:fs/promises';",
      "import * as fs from 'fs';",
      "const fs = await import('node:fs');",
      "const fs = require('fs');",
      "import 'node:fs';",
    ];
    for (const form of forms) expect(form.match(FS_IMPORT), form).not.toBeNull();
    for (const other of ["import { x } from './fs.js';", "import { y } from 'node:fsx';", '// fs']) expect(other.match(FS_IMPORT), other).toBeNull();
  });
});
