// `signgate --version` answers from bin/signgate.js without the command line: the version of package.json, exit 0.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { repoRoot, runCli } from '../helpers/fixtures.js';

test('--version prints the package version and nothing else; with more arguments yargs answers', () => {
  const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  const r = runCli(['--version']);
  expect(r.status).toBe(0);
  expect(r.stdout).toBe(`${version}\n`);
  expect(r.stderr).toBe('');
  const viaYargs = runCli(['--version', '--verbose']);
  expect(viaYargs.stdout).toBe(r.stdout);
});
