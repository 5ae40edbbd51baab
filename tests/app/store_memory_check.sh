#!/usr/bin/env bash
# The store's memory check at start (docs/STORE.md "Memory"): a store job whose store ranks on
# one host need more DRAM than the host has available stops before it allocates anything, with
# exit 2 and one line naming store.dram, the store ranks on the host, the sum and what the host
# has; no connection file is written. store.dram = 1TiB x 2 store ranks stands for the
# documented 8GiB x 3 on a 24 GiB machine (a value that no test machine holds, so the check
# fires on any of them). Then a job that fits starts as before (it prints no refusal).
# Usage: store_memory_check.sh SOURCE_DIR MOONCAKE MPIRUN
set -u
src=$1 mooncake=$2 mpirun=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-memory-check.XXXXXX")
launcher_pid=""
cleanup() {
  [[ -n ${launcher_pid} ]] && kill -KILL -- "-${launcher_pid}" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
export MOONCAKE_MPIRUN_ARGS="--mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"

# 1. Too much for the host: exit 2 within the 60 s it is given, the reason said once.
setsid timeout -s KILL 60 "$src/launch/mooncake-mpirun" --mpirun "$mpirun" --bin "$mooncake" \
  --np 3 -- --job.mode store --store.dram 1TiB --out "$work/big" >"$work/big.out" 2>&1 &
launcher_pid=$!
wait "$launcher_pid"
code=$?
launcher_pid=""
echo "mooncake-mpirun --np 3 -- --job.mode store --store.dram 1TiB: exit ${code}"
grep -v "^mooncake-mpirun\|^  " "$work/big.out"
[[ ${code} == 2 ]] || fail "a store that cannot fit its host exits ${code}, want 2"
line="store.dram = 1.00 TiB x 2 store rank(s) on host [^ ]* = 2.00 TiB, but [^ ]* has .* available"
n=$(grep -c "^mooncake: ${line}" "$work/big.out")
[[ ${n} == 1 ]] || fail "the memory error is printed ${n} times, want once: mooncake: ${line}"
[[ -e "$work/big/connect.json" ]] && fail "a connection file was written"

# 2. One that fits starts, and stops with exit 0 (no refusal printed).
setsid "$src/launch/mooncake-mpirun" --mpirun "$mpirun" --bin "$mooncake" --np 3 -- \
  --job.mode store --store.dram 16MiB --out "$work/small" >"$work/small.out" 2>&1 &
launcher_pid=$!
for _ in $(seq 1 600); do
  [[ -e "$work/small/connect.json" ]] && break
  kill -0 "$launcher_pid" 2>/dev/null || break
  sleep 0.1
done
if [[ -e "$work/small/connect.json" ]]; then
  "$mooncake" store stop "$work/small/connect.json" >/dev/null 2>&1 || fail "mooncake store stop failed"
  wait "$launcher_pid"
  code=$?
  [[ ${code} == 0 ]] || fail "a store that fits exits ${code} after its stop, want 0"
else
  fail "a store of 2 x 16 MiB did not start"
fi
launcher_pid=""
grep -q "available (" "$work/small.out" && fail "a store that fits was refused"
((failures == 0)) || { cat "$work/small.out"; exit 1; }
echo "PASS"
