#!/usr/bin/env bash
# Runs a command where the only network is this machine's loopback: a network namespace of its own (unshare --net)
# that has just `lo`, so a test that sends a packet to any other address, or asks the machine's resolver for a name,
# fails there instead of leaving the machine (docs/testing.md). Needs root (CI runs as root).
#   bash scripts/loopback-only.sh [--postgres <version> <cluster>] -- <command> [args...]
# --postgres moves that PostgreSQL cluster into the namespace for the command's time (stopped here, started inside,
# stopped inside when the command ends, started here again), as the tests reach it on 127.0.0.1.
set -euo pipefail
pg=()
if [ "${1:-}" = --postgres ]; then
  pg=("$2" "$3")
  shift 3
fi
if [ "${1:-}" != -- ] || [ $# -lt 2 ]; then
  echo "loopback-only: usage: bash scripts/loopback-only.sh [--postgres <version> <cluster>] -- <command> [args...]" >&2
  exit 2
fi
shift
if ! unshare --net true 2>/dev/null; then
  echo "loopback-only: unshare --net is refused here (it needs root, or CAP_SYS_ADMIN); run as root, as CI does" >&2
  exit 1
fi
if [ ${#pg[@]} -eq 2 ]; then
  pg_ctlcluster "${pg[0]}" "${pg[1]}" stop 2>/dev/null || true
  trap 'pg_ctlcluster "${pg[0]}" "${pg[1]}" start || echo "loopback-only: PostgreSQL ${pg[0]}/${pg[1]} did not start again outside the namespace" >&2' EXIT
fi
# Inside: loopback up, and nothing else; the cluster (if any) started and, whatever the command's end, stopped.
PG_VERSION="${pg[0]:-}" PG_CLUSTER="${pg[1]:-}" unshare --net -- bash -c '
  set -euo pipefail
  ip link set lo up
  if [ -n "$PG_VERSION" ]; then
    pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" start
    trap "pg_ctlcluster \"$PG_VERSION\" \"$PG_CLUSTER\" stop || true" EXIT
  fi
  links=$(ip -o link show | cut -d: -f2 | tr -d " " | tr "\n" " ")
  test "$links" = "lo " || { echo "loopback-only: the namespace has more than lo: $links" >&2; exit 1; }
  "$@"
' loopback-only "$@"
