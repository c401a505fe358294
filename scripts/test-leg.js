// Runs one leg of the tests that `npm test` leaves out, on any shell (cmd.exe has no `VAR=value command`):
//   node scripts/test-leg.js heavy      the one-file executables, Wine, the NuGet packages, the corpora, PKCS#11 processes, test/faults
//   node scripts/test-leg.js sdk        the tests that run real `dotnet build`s (MSBuild targets, SDK fixtures, C# clients)
//   node scripts/test-leg.js service    the reference service (test/server) and the client against it (test/client)
//   node scripts/test-leg.js postgres   the service tests again on PostgreSQL (needs SIGNGATE_TEST_DATABASE_URL)
//   node scripts/test-leg.js windows    the tests that need no Linux tool (Mono, SoftHSM, PostgreSQL, Chromium): the
//                                       release workflow runs them on a Windows runner
// Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The tests of the windows leg: the reader, the rules, the reports and the strong-name code on the fixtures alone. */
const WINDOWS = [
  'test/core',
  'test/pe',
  'test/binary',
  'test/zip',
  'test/rules',
  'test/report',
  'test/workflows',
  'test/metadata/',
  'test/strongname/key-blob.test.ts',
  'test/strongname/known-keys.test.ts',
  'test/strongname/sign-verify.test.ts',
  'test/strongname/corrupt-fixtures.test.ts',
];

const [leg, ...rest] = process.argv.slice(2);
const env = { ...process.env };
const args = ['run', ...rest];
if (leg === 'heavy' || leg === 'sdk' || leg === 'service') env.SIGNGATE_TEST_LEG = leg;
else if (leg === 'postgres') {
  env.SIGNGATE_TEST_LEG = leg;
  env.SIGNGATE_TEST_STORE = 'postgres';
} else if (leg === 'windows') {
  // shapes.test.ts compiles its assemblies with Mono's tools.
  args.push('--exclude', 'test/metadata/shapes.test.ts', ...WINDOWS);
} else {
  console.error(`test-leg: name a leg, heavy, sdk, service, postgres or windows (not ${JSON.stringify(leg ?? '')})`);
  process.exit(2);
}
// vitest's own command (its package exports no path to it, its package.json is exported).
const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const r = spawnSync(process.execPath, [vitest, ...args], { stdio: 'inherit', env });
process.exit(r.status ?? 1);
