#!/usr/bin/env bash
# Builds the previous release of signgate, the one the upgrade fixture was made with (fixtures/upgrade/<commit>), from
# this clone's own history, for the side-by-side and rollback tests (test/server/previous-release.test.ts): the
# tracked files of that commit (git archive, so this checkout is not touched), `npm ci` (which builds it) and, if that
# did not, `npm run build`. Its CLI is then <folder>/bin/signgate.js.
#
#   previous-release.sh [COMMIT]    default: the commit of the newest fixture in fixtures/upgrade (its manifest's commitDate)
#
# The folder is ${SIGNGATE_PREVIOUS_RELEASE:-~/.cache/signgate/release-<commit>}; a folder that holds a finished build
# of that commit (its .signgate-release file) is kept as it is, so a second run takes a second. Needs git with the
# commit (not a shallow clone: `git fetch --unshallow`), node, npm and the npm registry.
set -euo pipefail
export LC_ALL=C
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -gt 0 ]; then
  wanted="$1"
else
  # The newest fixture by its manifest's commitDate (as test/helpers/previous-release.ts picks it).
  wanted="$(node -e '
    const { existsSync, readdirSync, readFileSync } = require("node:fs");
    const dir = process.argv[1];
    const manifests = readdirSync(dir).filter((n) => existsSync(`${dir}/${n}/manifest.json`)).map((n) => JSON.parse(readFileSync(`${dir}/${n}/manifest.json`, "utf8")));
    manifests.sort((a, b) => Date.parse(a.commitDate) - Date.parse(b.commitDate));
    if (!manifests.length) process.exit(1);
    console.log(manifests.at(-1).commit);
  ' "$repo/fixtures/upgrade")" || { echo "previous-release: no fixtures/upgrade/*/manifest.json names a commit" >&2; exit 1; }
fi
command -v git >/dev/null || { echo "previous-release: git not found; install git" >&2; exit 1; }
commit="$(git -C "$repo" rev-parse --verify --quiet "${wanted}^{commit}")" || {
  echo "previous-release: this clone ($repo) has no commit $wanted; a shallow clone? run git fetch --unshallow, then this again" >&2
  exit 1
}
short="${commit:0:7}"
home="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
out="${SIGNGATE_PREVIOUS_RELEASE:-$home/.cache/signgate/release-$short}"
if [ -f "$out/.signgate-release" ] && [ "$(cat "$out/.signgate-release")" = "$commit" ] && [ -f "$out/dist/cli/main.js" ]; then
  echo "previous-release: $short is built in $out"
  exit 0
fi
mkdir -p "$(dirname "$out")"
work="$(mktemp -d "$(dirname "$out")/.release-$short.XXXXXX")"
trap 'rm -rf "$work"' EXIT
git -C "$repo" archive --format=tar "$commit" | tar -xf - -C "$work"
(cd "$work" && npm ci --no-audit --no-fund >"$work/.npm-ci.log" 2>&1) || {
  echo "previous-release: npm ci of $short failed:" >&2
  tail -40 "$work/.npm-ci.log" >&2
  exit 1
}
[ -f "$work/dist/cli/main.js" ] || (cd "$work" && npm run build >"$work/.build.log" 2>&1) || {
  echo "previous-release: the build of $short failed:" >&2
  tail -40 "$work/.build.log" >&2
  exit 1
}
version="$(node "$work/bin/signgate.js" --version)"
echo "$commit" >"$work/.signgate-release"
# The finished build takes the folder's place at once (a rename), never half of one.
rm -rf "$out.old"
[ -e "$out" ] && mv "$out" "$out.old"
mv "$work" "$out"
rm -rf "$out.old"
trap - EXIT
echo "previous-release: $short built in $out ($version)"
