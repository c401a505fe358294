// test/ follows src/'s rooms: a folder of tests is named after the room of src/ it tests (test/server/jobs for
// src/server/jobs), or it is one of the journeys listed here that cross rooms, each with what it holds.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { repoRoot } from './helpers/fixtures.js';

/** Test folders that are not a room of src/: what each one tests across the rooms. */
const JOURNEYS: Record<string, string> = {
  ci: 'the CI script itself (.ci/run)',
  client: 'the client against a running service: sign, jobs, the ledger, hostile services (workflows/ and service-client/)',
  corpus: 'the reader and the rules over corpora of assemblies nobody here wrote',
  deploy: 'the deployment files of deploy/',
  docs: "the documents' claims, examples and links",
  faults: 'fault injection: full disks, kill -9 and restart',
  helpers: 'shared setup, no tests',
  package: 'what is shipped: the npm package, the one-file executables, the NuGet packages',
  sdk: 'real `dotnet build`s of add-in projects with the MSBuild targets',
  secrets: 'the sweep for secrets in every output',
};

const folders = (dir: string) =>
  readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

describe('the tests mirror the code', () => {
  test('every folder of test/ is a room of src/ or a listed journey, and every journey still exists', () => {
    const rooms = new Set(folders(join(repoRoot, 'src')));
    const tests = folders(join(repoRoot, 'test'));
    expect(tests.filter((d) => !rooms.has(d) && !(d in JOURNEYS))).toEqual([]);
    expect(Object.keys(JOURNEYS).filter((d) => !tests.includes(d))).toEqual([]);
  });

  test("test/server's folders are src/server's rooms, and no test file is left directly in a folder whose room has rooms", () => {
    const rooms = folders(join(repoRoot, 'src', 'server'));
    const tests = folders(join(repoRoot, 'test', 'server'));
    expect(tests.filter((d) => !rooms.includes(d))).toEqual([]);
    // What stays directly in test/server tests modules directly in src/server (the configuration, its reload, the
    // service's log, serve init, the record key) or the whole node (the previous release beside this one).
    const direct = readdirSync(join(repoRoot, 'test', 'server')).filter((f) => f.endsWith('.test.ts'));
    expect(direct.length).toBeLessThanOrEqual(8);
  });
});
