#!/usr/bin/env bash
# Kill a store rank with SIGKILL while it spills, restart over the same folder, and check that
# every block whose spill had completed is served with correct bytes and nothing corrupt is.
# Usage: ssd_crash_test.sh crash|crash-commit SSD_MPI_TEST MPIRUN [mpirun args...]
#   crash         the store rank dies right after acknowledging its 40th block
#   crash-commit  it dies inside a group commit (index slots flushed, not yet acknowledged)
set -u
mode=$1
exe=$2
shift 2
dir=$(mktemp -d "${TMPDIR:-/tmp}"/ssd_crash_XXXXXX)
trap 'rm -rf "$dir"' EXIT
out=$(timeout 120 "$@" -np 3 "$exe" --mode "$mode" "$dir" 2>&1)
code=$?
echo "$out" | tail -3
if [[ $code -eq 0 ]]; then
  echo "FAIL: the crash run exited 0 (the store rank should have been killed)"
  exit 1
fi
n=$(wc -l <"$dir/completed.txt" 2>/dev/null || echo 0)
echo "crash run: exit $code, $n spills completed before the kill"
if [[ $n -eq 0 ]]; then
  echo "FAIL: no spill completed before the kill"
  exit 1
fi
out=$(timeout 120 "$@" -np 3 "$exe" --mode recover "$dir" 2>&1)
code=$?
echo "$out" | grep -E "recovered|ssd_mpi_test|failure"
if [[ $code -ne 0 ]] || ! grep -q "ssd_mpi_test recover OK" <<<"$out"; then
  echo "FAIL: recovery run (exit $code)"
  exit 1
fi
echo "PASS"
