#!/usr/bin/env bash
# Exit statuses of the binary under mpirun, as a new user sees them:
#   1. launch/mooncake-mpirun ... -- --dry-run exits 0 (rank 0 writes its status on a dry run
#      too; the wrapper takes a missing status for a dead rank 0).
# Usage: mpirun_exit.sh SOURCE_DIR MOONCAKE MPIRUN [mpirun flags...]
set -u
src=$1 mooncake=$2 mpirun=$3
shift 3
mpirun_flags=("$@")
work=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-mpirun-exit.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# 1. The wrapper's dry run with mooncake's own --dry-run (the wrapper adds --oversubscribe, --allow-run-as-root and its own binding).
MOONCAKE_MPIRUN_ARGS="--mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo" \
  "${src}/launch/mooncake-mpirun" --mpirun "${mpirun}" --np 4 --bin "${mooncake}" -- --dry-run \
  >"$work/dry.out" 2>"$work/dry.err"
code=$?
echo "mooncake-mpirun --np 4 -- --dry-run: exit ${code}"
cat "$work/dry.err"
[[ ${code} == 0 ]] || fail "mooncake-mpirun --np 4 -- --dry-run exits ${code}, want 0"
grep -q "mooncake dry run: 4 ranks" "$work/dry.out" || fail "no role table from mooncake --dry-run"

((failures == 0)) || exit 1
echo "PASS"
