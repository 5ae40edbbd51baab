#!/usr/bin/env bash
# A rank dies during the bootstrap, under launch/mooncake-mpirun (Open MPI's orte_enable_recovery
# keeps the survivors running): the job must not hang (docs/FAULTS.md "A rank lost during the
# bootstrap"). Points (--fault.kill RANK@POINT, rank 4, a prefill rank, as in the report):
#   mpi_init   the rank dies before MPI_Init: the others wait inside MPI_Init
#   bootstrap  the rank dies just before the bootstrap exchange: the others wait in a collective,
#              and rank 0 names the rank that never arrived
# Asserts: the launcher exits non-zero (3, the job's bootstrap failure) within job.phase_timeout
# (10 s) + 30 s; no process of the job is left; the run folder holds bootstrap.json saying what
# failed (naming rank 4 at the bootstrap point).
# Usage: bootstrap_fault_test.sh POINT MOONCAKE CONFIG LAUNCHER MPIRUN [extra mpirun args...]
set -u
point=$1 mooncake=$2 config=$3 launcher_script=$4 mpirun=$5
shift 5
dir=$(mktemp -d)
# Leave nothing behind, even when an assertion fails: the test's own processes only.
trap 'pkill -KILL -f "^$mooncake .*--out $dir/run" 2>/dev/null; rm -rf "$dir"' EXIT
fail() {
  echo "FAIL ($point): $*"
  tail -30 "$dir/log"
  exit 1
}
phase_timeout=10
limit=$((phase_timeout + 30))
start=$(date +%s.%N)
MOONCAKE_MPIRUN_ARGS="$*" "$launcher_script" --mpirun "$mpirun" --bin "$mooncake" \
  --config "$config" --spread none -- --synthetic.requests 20 --job.phase_timeout ${phase_timeout}s \
  --fault.kill "4@${point}" --out "$dir/run" >"$dir/log" 2>&1 &
launcher=$!
# The test's own deadline: a hung job is killed here and the test fails (it used to hang for ever).
while kill -0 "$launcher" 2>/dev/null; do
  sleep 0.2
  elapsed=$(echo "$(date +%s.%N) - $start" | bc)
  if (($(echo "$elapsed > $limit" | bc))); then
    kill -TERM "$launcher"
    fail "the job still runs ${elapsed} s after its start (limit ${limit} s: job.phase_timeout + 30 s)"
  fi
done
wait "$launcher"
rc=$?
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
sleep 1  # mpirun may reap its last ranks just after it returns
left=$(pgrep -f "^$mooncake .*--out $dir/run")
[[ -z $left ]] && left_n=0 || left_n=$(wc -w <<<"$left")
echo "rank 4 killed at '${point}': launcher exit ${rc} after ${elapsed} s, ${left_n} process(es) left"
grep -E "bootstrap|never reached|MPI_Init" "$dir/log" | head -5
((left_n == 0)) || fail "processes left behind: ${left}"
((rc != 0)) || fail "the launcher exited 0 although the bootstrap failed"
((rc == 3)) || fail "exit ${rc}, expected 3 (the job's bootstrap failure, reported by rank 0)"
report=$dir/run/bootstrap.json
[[ -f $report ]] || fail "no bootstrap.json in the run folder"
cat "$report"
/usr/bin/python3 - "$report" "$point" <<'PY' || fail "bootstrap.json check"
import json, sys
j = json.load(open(sys.argv[1])); point = sys.argv[2]
def need(cond, what):
    if not cond:
        print("bootstrap.json:", what); sys.exit(1)
need(j["result"] == "bootstrap failed", f"result {j['result']!r}")
need(j["world_size"] == 7, f"world_size {j['world_size']}")
if point == "bootstrap":
    need(j["missing_ranks"] == [4], f"missing_ranks {j['missing_ranks']}, expected [4]")
    need("rank 4 never reached step 'bootstrap exchange'" in j["error"], f"error {j['error']!r}")
else:
    need("MPI_Init did not return" in j["error"], f"error {j['error']!r}")
PY
echo "PASS ($point, ${elapsed} s)"
