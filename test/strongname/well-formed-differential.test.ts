// One verdict per file: seeded, structure-aware mutants of fixtures/addin (test/helpers/mutator.ts) go through inspect,
// check (beside an intact add-in) and the service (one job with the intact add-in, on loopback); their verdicts agree on
// every mutant, the intact file is always judged and signed, and a disagreement names its seed for a replay. The CLI
// runs inspect, check, verify and fix on a sample of them: a clear error that names the file, never an internal error
// or a stack trace. The heavy leg runs 10,000 more mutants (well-formed-differential-heavy.test.ts).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { differentialSources, INTACT, mutantOf, runDifferential } from '../helpers/differential.js';
import { fixturePath, runCliAsync } from '../helpers/fixtures.js';
import { sandboxConfig, startServer, type TestServer } from '../helpers/server.js';

const MUTANTS = 500;
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.close());

describe('inspect, check and the service judge every mutant alike', () => {
  test(`${MUTANTS} mutants: no disagreement, the intact file always signed`, async () => {
    const { disagreements, judged } = await runDifferential(server, server.token(), sandboxConfig(), MUTANTS, 1);
    expect(disagreements).toEqual([]);
    // The mutations reached the reader: many refused, many not, with several distinct codes.
    const refused = judged.filter((v) => v.check !== null);
    expect(refused.length).toBeGreaterThan(MUTANTS / 5);
    expect(judged.length - refused.length).toBeGreaterThan(MUTANTS / 10);
    expect(new Set(refused.map((v) => v.check)).size).toBeGreaterThan(5);
  });
});

/** An internal error or a stack trace in what a command printed. */
const internal = /SG_ERR_INTERNAL|\n\s+at .+:\d+:\d+|TypeError|RangeError|ReferenceError/;

describe('the CLI on a sample of the mutants', () => {
  const { intact, sources } = differentialSources();
  // Refused mutants of the key blob and of tables first: the cases a user meets.
  const sample = Array.from({ length: 400 }, (_, i) => mutantOf(sources, 5000 + i))
    .filter((m) => /public key|row|cut|\(coded\)|\(string\)/.test(m.mutant.what))
    .slice(0, 8);
  test.each(sample.map((m) => [m.mutant.seed, m] as const))('seed %i: inspect, check, verify and fix give clean errors naming the file', async (_seed, m) => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-mutant-'));
    const file = join(dir, m.source);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, m.mutant.bytes);
    writeFileSync(join(dir, INTACT), intact);
    const key = fixturePath('test-keys/12345_public.snk');
    const runs = await Promise.all([
      runCliAsync(['inspect', file]),
      runCliAsync(['check', dir, '--key', key, '--vendor', 'Contoso', '--format', 'json']),
      runCliAsync(['verify', file]),
      runCliAsync(['fix', file, '--delay-sign', key, '--dry-run']),
    ]);
    // Each ends as the CLI's exits say: 0 done, 1 findings or a file that fails, 3 a file it cannot take (never 2, a
    // usage error, nor 70, an internal one).
    for (const r of runs) {
      expect(`${r.stdout}${r.stderr}`, m.mutant.what).not.toMatch(internal);
      expect([0, 1, 3], `${r.status}: ${r.stdout}${r.stderr}`).toContain(r.status);
    }
    const [inspect, check, verify, fix] = runs;
    // check judges every file and writes its whole report: the intact file passes, the mutant has its verdict.
    const report = JSON.parse(check!.stdout) as { files: { path: string; outcome: string; findings: { ruleId: string }[] }[] };
    expect(report.files.find((f) => f.path.endsWith(INTACT))?.outcome).toBe('pass');
    const mutant = report.files.find((f) => f.path.endsWith(m.source.split('/').pop()!))!;
    const refused = mutant.findings.some((f) => f.ruleId === 'SG001');
    expect(check!.status).toBe(refused || mutant.outcome === 'fail' ? 1 : 0);
    // inspect refuses exactly what check refuses, and names the file.
    expect(inspect!.status !== 0).toBe(refused);
    // A refused file is refused by verify (exit 3) and by fix (exit 1: it fixes what it can, docs/fix.md), each naming it.
    for (const r of [inspect!, verify!, fix!]) if (refused) expect(r.stdout + r.stderr).toContain(m.source.split('/').pop()!);
    if (refused) expect([verify!.status, fix!.status]).toEqual([3, 1]);
  });
});
