#!/usr/bin/env bash
# Makes the Debian 13 (trixie) root whose Wine 10 runs the Windows executable that ships (Node 24) for
# test/package/wine.test.ts. Debian 12's Wine 8 cannot start Node 24's win-x64 binary, and its `fetch` lacks
# TCP_KEEPALIVE; Debian 13's Wine 10 runs both. The root is made once (debootstrap, then `apt-get install wine64`
# inside it, about 3 minutes and 1.5 GB) and kept: a second call returns at once.
#
#   bash scripts/wine-root.sh [root]        root: $SIGNGATE_WINE_ROOT, else /var/cache/signgate/wine-trixie
#
# Needs root (debootstrap and chroot) and Debian's package mirror; the tests run Wine in it with `unshare -m` and
# `chroot`, the repository and the temporary folder bound at the same paths (test/helpers/wine.ts).
set -euo pipefail
root="${1:-${SIGNGATE_WINE_ROOT:-/var/cache/signgate/wine-trixie}}"
ready="$root/.signgate-wine-ready"
if [ -e "$ready" ]; then
  echo "wine-root: $root is ready ($(cat "$ready"))"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "wine-root: debootstrap is missing: apt-get install -y debootstrap" >&2; exit 1; }
# A half-made root (an earlier run stopped) is made again from the start.
rm -rf "$root"
mkdir -p "$(dirname "$root")"
# The mirror this machine's apt uses (deb822 sources, or a one-line list).
mirror=$( { sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources; sed -n 's/^deb  *\(http[^ ]*\/debian\)\/* .*/\1/p' /etc/apt/sources.list; } 2>/dev/null | head -1)
[ -n "$mirror" ] || { echo "wine-root: no Debian mirror found in /etc/apt/sources.list*; debootstrap needs one" >&2; exit 1; }
debootstrap --variant=minbase trixie "$root" "$mirror"
chroot "$root" sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends wine64 && apt-get clean'
version=$(unshare -m sh -c 'mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" && exec chroot "$0" /usr/lib/wine/wine64 --version' "$root")
echo "$version" > "$ready"
echo "wine-root: $root is ready ($version)"
