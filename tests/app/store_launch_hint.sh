#!/usr/bin/env bash
# The store service launched two ways (docs/CLIENT.md "Starting and stopping the store job"):
#   1. plain mpirun (fail-stop): rank 0 prints the one-line hint the serving job prints, naming
#      launch/mooncake-mpirun and the MCA flag;
#   2. launch/mooncake-mpirun --np 2 -- --job.mode store (1 master + 1 store rank, a layout the
#      launcher takes in store mode): no hint, and the launcher exits 0 after `mooncake store stop`.
# Usage: store_launch_hint.sh SOURCE_DIR MOONCAKE MPIRUN [mpirun flags...]
set -u
src=$1 mooncake=$2 mpirun=$3
shift 3
mpirun_flags=("$@")
work=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-store-hint.XXXXXX")
trap 'pkill -KILL -f "^$mooncake .*--out $work/" 2>/dev/null; rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
hint="note: mpirun ends the whole job when one rank dies; to survive a rank loss launch with launch/mooncake-mpirun"

# Starts the store job (the command in "$@") writing to $work/$name.out, waits up to 60 s for its
# connection file, stops it, and waits up to 60 s for the launcher's exit status.
run_store() {
  local name=$1
  shift
  "$@" >"$work/$name.out" 2>&1 &
  local pid=$! connect="$work/$name/connect.json"
  for _ in $(seq 1 600); do
    grep -q "^connection file:" "$work/$name.out" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  grep -q "^connection file:" "$work/$name.out" || { fail "$name: the store never became ready"; cat "$work/$name.out"; }
  "$mooncake" store stop "$connect" >/dev/null 2>&1 || fail "$name: mooncake store stop failed"
  for _ in $(seq 1 600); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    fail "$name: still running 60 s after the stop"
    kill -TERM "$pid"
  fi
  wait "$pid"
  code=$?
  echo "$name: exit ${code}"
}

run_store plain "$mpirun" "${mpirun_flags[@]}" -np 2 "$mooncake" --job.mode store \
  --store.dram 8MiB --out "$work/plain"
grep -qF "$hint" "$work/plain.out" || fail "plain mpirun: no hint naming launch/mooncake-mpirun"
[[ $code == 0 ]] || fail "plain mpirun: exit $code after the stop, want 0"

# The wrapper adds its own binding, --oversubscribe and --allow-run-as-root: only the MCA flags.
export MOONCAKE_MPIRUN_ARGS="--mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
run_store launcher "$src/launch/mooncake-mpirun" \
  --mpirun "$mpirun" --bin "$mooncake" --np 2 -- --job.mode store --store.dram 8MiB \
  --out "$work/launcher"
grep -qF "note: mpirun ends" "$work/launcher.out" && fail "launch/mooncake-mpirun: the hint is printed although the job survives a rank loss"
[[ $code == 0 ]] || { fail "launch/mooncake-mpirun: exit $code after the stop, want 0"; cat "$work/launcher.out"; }

((failures == 0)) || exit 1
grep -F "note:" "$work/plain.out"
echo "PASS"
