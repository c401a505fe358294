// The version a release tag names: `v1.2.3` or `1.2.3`, with an optional SemVer pre-release (`v1.2.3-rc.1`). The
// release workflow (.github/workflows/release.yml) packs the npm package and the NuGet packages with it.
//   node scripts/release-version.js v1.2.3        prints 1.2.3; exit 2 with a message for a tag that is not a version
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SEMVER = /^v?((0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?)$/;

/** The version of a release tag, or undefined when the tag names none. */
export function releaseVersion(tag) {
  return SEMVER.exec(String(tag ?? '').trim())?.[1];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const tag = process.argv[2];
  const version = releaseVersion(tag);
  if (!version) {
    console.error(
      `release-version: the tag ${JSON.stringify(tag ?? '')} is not a release version; tag the commit v<major>.<minor>.<patch> (e.g. v0.2.0, or v0.2.0-rc.1)`,
    );
    process.exit(2);
  }
  console.log(version);
}
