#!/usr/bin/env bash
# Makes the Debian 13 (trixie) root whose Wine 10 runs the Windows executable that ships (Node 24) for
# test/package/wine.test.ts. Debian 12's Wine 8 cannot start Node 24's win-x64 binary, and its `fetch` lacks
# TCP_KEEPALIVE; Debian 13's Wine 10 runs both. The root is made once (debootstrap, then `apt-get install wine64`
# inside it, about 3 minutes and 1.5 GB) and kept: a second call returns at once.
#
#   bash scripts/wine-root.sh [root]        root: $SIGNGATE_WINE_ROOT, else /var/cache/signgate/wine-trixie
#   bash scripts/wine-root.sh --mirror      prints the Debian mirror debootstrap would use, and nothing else
#
# The mirror is the one this machine's apt uses, read from $SIGNGATE_APT_ETC (default /etc/apt): deb822 files
# (sources.list.d/*.sources), one-line lists (sources.list.d/*.list) and sources.list, in that order; any of them
# may be absent. $SIGNGATE_DEBIAN_MIRROR names one outright.
#
# Needs root (debootstrap and chroot) and Debian's package mirror; the tests run Wine in it with `unshare -m` and
# `chroot`, the repository and the temporary folder bound at the same paths (test/helpers/wine.ts).
# Every failure prints one line starting with "wine-root:" that says what failed and what to do.
set -uo pipefail

fail() { echo "wine-root: $*" >&2; exit 1; }

# Prints the first Debian archive URI (one ending in /debian, so not debian-security) of the apt sources under $1.
# A missing file or folder is no error; no match prints nothing.
find_mirror() {
  local etc="$1" f line uri
  local files=()
  shopt -s nullglob
  for f in "$etc"/sources.list.d/*.sources; do files+=("deb822:$f"); done
  for f in "$etc"/sources.list.d/*.list; do files+=("list:$f"); done
  shopt -u nullglob
  [ -f "$etc/sources.list" ] && files+=("list:$etc/sources.list")
  for f in "${files[@]}"; do
    local kind="${f%%:*}" file="${f#*:}"
    [ -r "$file" ] || continue
    while IFS= read -r line || [ -n "$line" ]; do
      line="${line%$'\r'}"
      if [ "$kind" = deb822 ]; then
        # "URIs: a b" (one stanza may name several).
        [[ "$line" =~ ^URIs:[[:space:]]*(.*)$ ]] || continue
        for uri in ${BASH_REMATCH[1]}; do
          uri="${uri%/}"
          [[ "$uri" =~ ^https?://.*/debian$ ]] && { echo "$uri"; return 0; }
        done
      else
        # "deb [options] uri suite components", comments and deb-src lines left out.
        [[ "$line" =~ ^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]] ]] || continue
        uri="${BASH_REMATCH[2]%/}"
        [[ "$uri" =~ ^https?://.*/debian$ ]] && { echo "$uri"; return 0; }
      fi
    done < "$file"
  done
  return 0
}

apt_etc="${SIGNGATE_APT_ETC:-/etc/apt}"
if [ "${1:-}" = --mirror ]; then
  mirror="${SIGNGATE_DEBIAN_MIRROR:-$(find_mirror "$apt_etc")}"
  [ -n "$mirror" ] || fail "no Debian mirror found in $apt_etc/sources.list.d/*.sources, *.list or $apt_etc/sources.list; name one in SIGNGATE_DEBIAN_MIRROR"
  echo "$mirror"
  exit 0
fi

root="${1:-${SIGNGATE_WINE_ROOT:-/var/cache/signgate/wine-trixie}}"
ready="$root/.signgate-wine-ready"
if [ -e "$ready" ]; then
  echo "wine-root: $root is ready ($(cat "$ready"))"
  exit 0
fi
command -v debootstrap >/dev/null || fail "debootstrap is missing: apt-get install -y debootstrap"
command -v unshare >/dev/null || fail "unshare is missing: apt-get install -y util-linux"
[ "$(id -u)" = 0 ] || fail "making the root needs root (debootstrap and chroot): run it as root, or point SIGNGATE_WINE_ROOT at a ready root"
mirror="${SIGNGATE_DEBIAN_MIRROR:-$(find_mirror "$apt_etc")}"
[ -n "$mirror" ] || fail "no Debian mirror found in $apt_etc/sources.list.d/*.sources, *.list or $apt_etc/sources.list; name one in SIGNGATE_DEBIAN_MIRROR"
# A half-made root (an earlier run stopped) is made again from the start.
rm -rf "$root" || fail "cannot remove the half-made root $root: remove it by hand"
mkdir -p "$(dirname "$root")" || fail "cannot create $(dirname "$root"): choose another folder with SIGNGATE_WINE_ROOT"
log="$(dirname "$root")/wine-root.log"
echo "wine-root: making $root from $mirror (debootstrap trixie, then wine64; log: $log)"
debootstrap --variant=minbase trixie "$root" "$mirror" > "$log" 2>&1 \
  || fail "debootstrap trixie from $mirror failed (last line: $(tail -1 "$log")); see $log, check the mirror, then run this script again"
chroot "$root" sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends wine64 && apt-get clean' >> "$log" 2>&1 \
  || fail "apt-get install wine64 inside $root failed (last line: $(tail -1 "$log")); see $log, then run this script again"
version=$(unshare -m sh -c 'mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" && exec chroot "$0" /usr/lib/wine/wine64 --version' "$root" 2>> "$log") \
  || fail "wine64 --version inside $root failed (see $log); remove $root and run this script again"
case "$version" in
  wine-1[0-9]*) ;;
  *) fail "wine64 inside $root is \"$version\", not Wine 10 or later: remove $root and run this script again" ;;
esac
echo "$version" > "$ready" || fail "cannot write $ready"
echo "wine-root: $root is ready ($version)"
