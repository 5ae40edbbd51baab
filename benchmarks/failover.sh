#!/usr/bin/env bash
# What the loss of the active conductor costs (docs/FAULTS.md, "A standby conductor"): a store
# service of 4 ranks with a standby (`roles = conductor:2 store:2`, the default failure timeout),
# a Python client putting and reading back verified objects in a loop
# (benchmarks/failover_client.py), and the active conductor SIGKILLed 2 s in. Per run: the
# takeover time from summary.json's failover block (`takeover_ms`: the old active's last
# heartbeat heard by the standby to the first request the new master served; `ready_ms`: to the
# new master serving), the client's longest pause between two completed steps, and the
# acknowledged objects that did not read back (lost). Medians of --runs runs; the last line
#   failover takeover_ms=<t> client_pause_ms=<p> lost=<n>
# (lost: the sum over the runs). --job serving|all: the serving job's half, where the serving job
# has a standby conductor; where it has none, the script says so and `all` is the store half.
# Exits 1 when a run failed (no takeover, an object lost, the job's own exit status non-zero).
# Runs from the repository root with no arguments.
set -euo pipefail
usage() {
  cat <<'USAGE'
Usage: benchmarks/failover.sh [--job store|serving|all] [--runs N] [--tls VALUE] [--build DIR]
                             [--traces DIR]

  --job WHICH     store (the store service), serving (a serving job), all (default: all)
  --runs N        runs per job, the median reported (default: 5)
  --tls VALUE     the job's transport, as launch/mooncake-mpirun takes it (default: auto)
  --build DIR     build folder holding mooncake and python/ (default: build)
  --traces DIR    traces for the serving job (default: ../shared/traces)
  -h, --help      this text

Last line: failover takeover_ms=<t> client_pause_ms=<p> lost=<n>
USAGE
}
root="$(cd "$(dirname "$0")/.." && pwd)"
job=all runs=5 tls=auto build="$root/build" traces="$root/../shared/traces"
while (($# > 0)); do
  case $1 in
    --job) job=${2:?--job needs store, serving or all}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --tls) tls=${2:?--tls needs a value}; shift 2 ;;
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --traces) traces=${2:?--traces needs a folder}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "failover: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
case $job in store | serving | all) ;; *) echo "failover: --job store|serving|all, not '$job'" >&2; exit 2 ;; esac
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "failover: --runs must be a positive number, not '$runs'" >&2; exit 2; }
[[ -x $build/mooncake ]] || { echo "failover: no $build/mooncake (build first)" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 UCX_WARN_UNUSED_ENV_VARS=n
export MOONCAKE_MPIRUN_ARGS="--mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
# Each job runs through job_start (launch/lib-job.sh): stopped by PID, ranks included, whatever
# ends the script (an error, Ctrl-C, SIGTERM), before its run folder goes.
# shellcheck source=launch/lib-job.sh
source "$root/launch/lib-job.sh"
out=$(mktemp -d)
cleanup() { rm -rf "$out"; }
job_traps cleanup
results="$out/results.jsonl"
: >"$results"

# rank_pid SID RANK: the PID of the mooncake process of rank RANK in session SID (empty if none).
rank_pid() {
  local p
  for p in $(job_members "$1"); do
    [[ $(readlink "/proc/$p/exe" 2>/dev/null) == "$(readlink -f "$build/mooncake")" ]] || continue
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$p"; return; }
  done
}

fail_run() {  # fail_run DIR WHY
  tail -30 "$1/job.log" >&2 || true
  echo "failover: $2" >&2
  exit 1
}

store_run() {  # store_run N: one store-service failover; appends its JSON line to $results
  local dir="$out/store$1" victim="" i code=0
  mkdir -p "$dir"
  job_start "$root/launch/mooncake-mpirun" --bin "$build/mooncake" --tls "$tls" --roles "conductor:2 store:2" \
    -- --job.mode store --store.dram 128MiB --out "$dir/run" >"$dir/job.log" 2>&1
  local sid=$JOB_PID
  for ((i = 0; i < 600; ++i)); do
    [[ -f $dir/run/connect.json ]] && victim=$(rank_pid "$sid" 0)
    [[ -n $victim ]] && break
    kill -0 "$sid" 2>/dev/null || fail_run "$dir" "the store job ended before it was ready"
    sleep 0.1
  done
  [[ -n $victim ]] || fail_run "$dir" "the store job was not ready within 60 s"
  /usr/bin/python3 "$root/benchmarks/failover_client.py" --connect "$dir/run/connect.json" \
    --victim "$victim" >"$dir/client.json" 2>"$dir/client.err" || code=$?
  ((code == 0)) || { cat "$dir/client.json" "$dir/client.err" >&2; fail_run "$dir" "store run $1: the client failed (exit $code)"; }
  "$build/mooncake" store stop "$dir/run/connect.json" >"$dir/stop.log" 2>&1 ||
    fail_run "$dir" "store run $1: mooncake store stop failed: $(cat "$dir/stop.log")"
  code=0
  wait "$sid" || code=$?
  job_forget "$sid"
  ((code == 0)) || fail_run "$dir" "store run $1: the store job exited $code"
  /usr/bin/python3 - "$dir/run/summary.json" "$dir/client.json" "$1" >>"$results" <<'PY' ||
import json, sys
summary, client, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
fo = summary.get("failover", {})
if not fo.get("took_over"):
    sys.exit(f"store run {n}: no takeover in summary.json: {fo}")
print(json.dumps({"job": "store", "ready_ms": fo["ready_ms"], "takeover_ms": fo["takeover_ms"],
                  "pause_ms": client["pause_ms"], "lost": client["lost"],
                  "acked": client["acked"], "reattached": client["reattached"],
                  "client_follows": client["follows"]}))
PY
    fail_run "$dir" "store run $1: no usable summary.json"
  tail -1 "$results" | sed "s/^/failover: store run $1: /" >&2
}

# The serving job's half needs a standby conductor in a serving job: a build whose role table
# refuses `conductor:2` in a serving job (its --dry-run, 8 ranks, about a second) has none.
serving_available() {
  # shellcheck disable=SC2086  # MOONCAKE_MPIRUN_ARGS: one argument per word
  timeout 60 mpirun -np 8 $MOONCAKE_MPIRUN_ARGS "$build/mooncake" --dry-run \
    --roles "conductor:2 store:2 prefill:2 decode:2" >/dev/null 2>&1
}

# serving_run N: one serving-job failover, mpi_failover_serving's scenario with the serving job's
# default failure timeout (tests/faults/failover_serving_test.sh: 8 ranks, 200 conversation
# requests, rank 0 SIGKILLed a third in, every check of the test applied; shared memory). The
# serving job has no client: its pause is the replay's, until the new conductor's first decision
# (takeover_ms); `acked` counts the completed requests. Appends its JSON line to $results.
serving_run() {
  # Not `out`: the script's own folder (its EXIT trap removes "$out").
  local log line
  log=$(FAILOVER_FAILURE_TIMEOUT=1s "$root/tests/faults/failover_serving_test.sh" kill \
    "$build/mooncake" "$root/configs/serve/faults.ini" "$traces/conversation_trace.jsonl" \
    "$root/launch/mooncake-mpirun" "$(command -v mpirun)" -x UCX_TLS=posix,cma,self) || {
    echo "$log" | tail -20 >&2
    echo "failover: serving run $1 failed" >&2
    exit 1
  }
  line=$(grep '^failover: completed' <<<"$log")
  /usr/bin/python3 - "$line" >>"$results" <<'PY'
import json, re, sys
line = sys.argv[1]
num = lambda key: float(re.search(key + r" ([0-9.]+)", line).group(1))
print(json.dumps({"job": "serving", "ready_ms": num("ready_ms"), "takeover_ms": num("takeover_ms"),
                  "pause_ms": num("takeover_ms"), "acked": int(num("completed")), "lost": 0}))
PY
  tail -1 "$results" | sed "s/^/failover: serving run $1: /" >&2
}

if [[ $job == store || $job == all ]]; then
  for ((n = 1; n <= runs; ++n)); do store_run "$n"; done
fi
if [[ $job == serving || $job == all ]]; then
  if serving_available; then
    [[ -d $traces ]] || { echo "failover: traces folder not found: $traces" >&2; exit 2; }
    for ((n = 1; n <= runs; ++n)); do serving_run "$n"; done
  else
    echo "failover: the serving job has no standby conductor in this build (roles =" \
      "conductor:2 is the store service's): serving half not available"
    [[ $job == serving ]] && exit 0
  fi
fi

/usr/bin/python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
if not rows:
    sys.exit(0)
print(f"{'job':<8} {'run':>3} {'ready ms':>9} {'takeover ms':>11} {'client pause ms':>15} "
      f"{'acked':>6} {'lost':>5}")
for i, r in enumerate(rows, 1):
    print(f"{r['job']:<8} {i:>3} {r['ready_ms']:>9.0f} {r['takeover_ms']:>11.0f} "
          f"{r['pause_ms']:>15.0f} {r['acked']:>6} {r['lost']:>5}")
med = lambda k: statistics.median(r[k] for r in rows)
print(f"failover takeover_ms={med('takeover_ms'):.0f} client_pause_ms={med('pause_ms'):.0f} "
      f"lost={sum(r['lost'] for r in rows)}")
PY
