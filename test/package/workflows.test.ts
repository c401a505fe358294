// The release workflow (.github/workflows/release.yml) is checked here by a validator of GitHub's workflow schema
// (@action-validator/cli, from npm), and its steps against the project: the version comes from the tag, the
// scripts and legs it runs exist, and publishing needs the tests on both systems first.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';

const workflows = join(repoRoot, '.github', 'workflows');
const validator = join(dirname(createRequire(import.meta.url).resolve('@action-validator/cli/package.json')), 'cli.mjs');
const validate = (file: string) => spawnSync(process.execPath, [validator, file], { encoding: 'utf8' });
const release = readFileSync(join(workflows, 'release.yml'), 'utf8');

describe('the workflows are valid GitHub workflows', () => {
  const files = readdirSync(workflows).filter((f) => /\.ya?ml$/.test(f));
  test('there is a release workflow', () => expect(files).toContain('release.yml'));
  test.each(files)('%s', (file) => {
    const r = validate(join(workflows, file));
    expect(r.stdout + r.stderr, file).not.toMatch(/error/i);
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });
  test('the validator refuses a broken workflow (a job without runs-on, a step with neither run nor uses)', () => {
    const broken = join(mkdtempSync(join(tmpdir(), 'signgate-workflow-')), 'broken.yml');
    writeFileSync(broken, release.replace(/runs-on: ubuntu-latest\n/, '').replace('      - run: npm ci\n', '      - name: nothing\n'));
    expect(validate(broken).status).not.toBe(0);
  });
});

describe('the release workflow fits the project', () => {
  test("the version is the tag's; a tag that is no version stops the release", () => {
    const version = (tag: string) => spawnSync(process.execPath, [join(repoRoot, 'scripts', 'release-version.js'), tag], { encoding: 'utf8' });
    expect(version('v1.2.3').stdout.trim()).toBe('1.2.3');
    expect(version('0.2.0-rc.1').stdout.trim()).toBe('0.2.0-rc.1');
    for (const bad of ['v1.2', 'release-1', 'v01.2.3', 'v1.2.3-', '']) {
      const r = version(bad);
      expect(r.status, bad).toBe(2);
      expect(r.stderr).toContain('is not a release version');
    }
    expect(release).toContain('node scripts/release-version.js "$TAG"');
    expect(release).toContain('npm version "$VERSION" --no-git-tag-version');
    expect(release).toContain('node scripts/build-nuget.js --version "$VERSION"');
  });

  test('the scripts it runs exist, and publishing waits for the tests on Linux and Windows', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    for (const m of release.matchAll(/npm run ([\w:-]+)/g)) expect(pkg.scripts, m[1]).toHaveProperty(m[1]!);
    expect(release).toContain('bash .ci/run');
    expect(release).toMatch(/pack:\n\s+needs: \[version, test-linux, test-windows\]/);
    expect(release).toMatch(/publish:\n\s+needs: \[version, pack\]/);
    expect(release).toContain('--provenance');
    expect(release).toMatch(/id-token: write/);
  });

  test('a run by hand (workflow_dispatch) checks out the tag it publishes under in every job, not the branch it was dispatched from', () => {
    expect(release).toMatch(/workflow_dispatch:\n\s+inputs:\n\s+tag:/);
    expect(release).toContain("RELEASE_REF: ${{ inputs.tag && format('refs/tags/{0}', inputs.tag) || github.ref }}");
    const checkouts = [...release.matchAll(/- uses: actions\/checkout@[^\n]+\n((?:\s{8,}[^\n]*\n)*)/g)];
    const jobs = [...release.matchAll(/^ {2}[\w-]+:\n {4}(?:needs|runs-on)/gm)];
    expect(checkouts.length).toBeGreaterThan(0);
    // Every job that has steps from the repository checks it out at the tag (publish has only the packed artifact).
    expect(checkouts.length).toBe(jobs.length - 1);
    for (const [, withBlock] of checkouts) expect(withBlock).toMatch(/with:\n\s+ref: \$\{\{ env\.RELEASE_REF \}\}\n/);
    // The version is read from the same tag, and one tag is released once at a time, by push or by hand.
    expect(release).toContain('TAG: ${{ inputs.tag || github.ref_name }}');
    expect(release).toContain('group: release-${{ inputs.tag || github.ref_name }}');
  });
});
