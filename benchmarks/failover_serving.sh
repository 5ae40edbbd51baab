#!/usr/bin/env bash
# The serving job's takeover, measured (docs/FAULTS.md "A standby conductor (the serving job)"):
# mpi_failover_serving's scenario run N times (tests/faults/failover_serving_test.sh: 8 ranks,
# roles = conductor:2 store:2 prefill:2 decode:2, 200 conversation requests at time scale 4, the
# active conductor SIGKILLed a third of the way in, every check of the test applied). Prints each
# run's takeover_ms (the old active's last heartbeat heard by the standby -> the new conductor's
# first decision) and ready_ms (-> it conducts), then the last line
#   failover_serving takeover_ms=<median> ready_ms=<median> lost=0 runs=<n>
# Exits 1 when a run failed its checks. Runs from the repository root with no arguments.
set -euo pipefail
usage() {
  cat <<'USAGE'
Usage: benchmarks/failover_serving.sh [--build DIR] [--trace FILE] [--runs N] [--failure_timeout T]

  --build DIR           build folder holding mooncake (default: build)
  --trace FILE          Mooncake trace (default: ../shared/traces/conversation_trace.jsonl)
  --runs N              runs, the median is printed (default: 5)
  --failure_timeout T   cluster.failure_timeout of the job (default: 1s, the serving default)
  -h, --help            this text
USAGE
}
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build" trace="$root/../shared/traces/conversation_trace.jsonl" runs=5 timeout=1s
while (($# > 0)); do
  case $1 in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --trace) trace=${2:?--trace needs a file}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --failure_timeout) timeout=${2:?--failure_timeout needs a duration}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "failover_serving: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ -x $build/mooncake ]] || { echo "failover_serving: no $build/mooncake (build first)" >&2; exit 2; }
[[ -r $trace ]] || { echo "failover_serving: trace not found: $trace" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 UCX_WARN_UNUSED_ENV_VARS=n
takeover=() ready=()
for i in $(seq 1 "$runs"); do
  out=$(FAILOVER_FAILURE_TIMEOUT=$timeout "$root/tests/faults/failover_serving_test.sh" kill \
    "$build/mooncake" "$root/configs/serve/faults.ini" "$trace" "$root/launch/mooncake-mpirun" \
    "$(command -v mpirun)" -x UCX_TLS=posix,cma,self) || {
    echo "$out" | tail -20
    echo "failover_serving: run $i failed" >&2
    exit 1
  }
  line=$(grep '^failover: completed' <<<"$out")
  echo "run $i: ${line#failover: }"
  takeover+=("$(sed -E 's/.*takeover_ms ([0-9]+).*/\1/' <<<"$line")")
  ready+=("$(sed -E 's/.*ready_ms ([0-9]+).*/\1/' <<<"$line")")
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
echo "failover_serving takeover_ms=$(median "${takeover[@]}") ready_ms=$(median "${ready[@]}") lost=0 runs=$runs"
