// The previous release of signgate, the one the newest upgrade fixture (fixtures/upgrade/<commit>) was made with, as
// scripts/previous-release.sh builds it from the clone's history: for the tests that run it beside this release and
// roll back to it (test/server/previous-release.test.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fixturePath } from './fixtures.js';

export interface PreviousRelease {
  /** Its full commit id, from the fixture's manifest. */
  commit: string;
  short: string;
  /** The built folder (its schemas/, dist/, bin/). */
  dir: string;
  /** Its bin/signgate.js. */
  cli: string;
}

/** The commit of the newest upgrade fixture: the latest `commitDate` among the folders' manifests. */
const commit = readdirSync(fixturePath('upgrade'))
  .filter((name) => existsSync(fixturePath(`upgrade/${name}/manifest.json`)))
  .map((name) => JSON.parse(readFileSync(fixturePath(`upgrade/${name}/manifest.json`), 'utf8')) as { commit: string; commitDate: string })
  .sort((a, b) => Date.parse(a.commitDate) - Date.parse(b.commitDate))
  .at(-1)!.commit;

/**
 * The previous release's build, or undefined when it is not built here; in CI (CI set) a missing build throws, as
 * .ci/run builds it (`bash scripts/previous-release.sh`).
 */
export function previousRelease(): PreviousRelease | undefined {
  const short = commit.slice(0, 7);
  const dir = process.env.SIGNGATE_PREVIOUS_RELEASE ?? join(homedir(), '.cache', 'signgate', `release-${short}`);
  const marker = join(dir, '.signgate-release');
  const built = existsSync(marker) && readFileSync(marker, 'utf8').trim() === commit && existsSync(join(dir, 'dist/cli/main.js'));
  if (!built) {
    if (process.env.CI) throw new Error(`CI is set but release ${short} is not built in ${dir}: .ci/run must run bash scripts/previous-release.sh`);
    return undefined;
  }
  return { commit, short, dir, cli: join(dir, 'bin/signgate.js') };
}
