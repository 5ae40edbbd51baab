#!/usr/bin/env bash
# --job.deadline ends the replay at the deadline, not after the whole trace was dispatched: the
# default 300-request workload (about 30 s of wall time) with a 3 s deadline ends within 20 s,
# exits 1, reports the unfinished requests as lost by id, and summary.json counts them.
# Usage: deadline.sh MOONCAKE MPIRUN [mpirun args...]
set -u
mooncake=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
start=$(date +%s)
# A 10 s failure timeout: a rank declared dead after a second's stall on a loaded machine would
# end the job with another status than the deadline's.
out=$("$@" -np 4 "$mooncake" --job.deadline 3s --cluster.failure_timeout 10s \
  --job.rpc_timeout 10s --out "$dir/run" 2>&1)
code=$?
elapsed=$(($(date +%s) - start))
echo "$out" | grep -E "requests +total|LOST|result"
fail() { echo "FAIL: $*"; exit 1; }
[[ $code -eq 1 ]] || fail "exit status $code, expected 1 (requests were lost)"
# 25 s: the deadline, the job's start and stop (MPI, UCX, the summary), and a sanitizer build on a
# loaded 2-core machine (16 s seen); the whole trace would take 30 s and more.
[[ $elapsed -le 25 ]] || fail "the job took ${elapsed} s with a 3 s deadline"
grep -qE "LOST +[1-9][0-9]* requests lost \(not finished by the deadline\): [0-9]+, " <<<"$out" ||
  fail "no LOST line naming the lost requests by id"
lost=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['requests']['lost'])" \
  "$dir/run/summary.json") || fail "no summary.json"
[[ $lost -gt 0 ]] || fail "summary.json counts $lost lost requests"
echo "PASS: exit 1 after ${elapsed} s, $lost requests lost"
