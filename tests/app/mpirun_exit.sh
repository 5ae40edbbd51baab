#!/usr/bin/env bash
# Exit statuses of the binary under mpirun, as a new user sees them:
#   1. launch/mooncake-mpirun ... -- --dry-run exits 0 (rank 0 writes its status on a dry run
#      too; the wrapper takes a missing status for a dead rank 0).
#   2. mpirun -np 2 mooncake --roles LAYOUT that needs more ranks: the error is printed once (by
#      rank 0), every rank exits 2, and no rank calls MPI_Abort (no MPI_ABORT banner). mpirun's
#      own report that a process exited non-zero stays: Open MPI 4.1 prints it for any rank
#      that exits non-zero, MPI_Finalize or not (tried), and it has no parameter to silence it.
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

# 2. A role layout that does not fit the job.
"${mpirun}" "${mpirun_flags[@]}" -np 2 "${mooncake}" --roles "conductor:1 store:2 prefill:1 decode:1" \
  --out "$work/run" >"$work/roles.out" 2>"$work/roles.err"
code=$?
echo "mpirun -np 2 mooncake --roles 'conductor:1 store:2 prefill:1 decode:1': exit ${code}"
cat "$work/roles.out" "$work/roles.err"
[[ ${code} == 2 ]] || fail "a layout that does not fit exits ${code}, want 2"
n=$(grep -c "^mooncake: the job has 2 ranks" "$work/roles.err")
[[ ${n} == 1 ]] || fail "the layout error is printed ${n} times, want once"
grep -q "MPI_ABORT" "$work/roles.out" "$work/roles.err" && fail "a rank called MPI_Abort"

((failures == 0)) || exit 1
echo "PASS"
