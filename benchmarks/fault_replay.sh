#!/usr/bin/env bash
# What a store rank's death costs a live replay: the same slice of the conversation trace served
# twice by 7 ranks (configs/serve/faults.ini: 3 store ranks, store.replicas = 2), once clean and
# once with store rank 1 SIGKILLed a third of the way into the replay. Prints completed
# requests, mean TTFT and the prefix hit rate of both runs, then the last line
#   fault_replay lost=<n> failed=<n> corrupt=<n> killed=<rank> missing_in_store=<n>
#                rejected_delta=<faulted - clean> ttft_ratio=<faulted/clean>
# (killed: the rank the faulted run declared dead, -1 when none; missing_in_store: prefix blocks
# the store no longer had, 0 when every read failed over to the other replica). Exits 1 when a
# run failed (launch/mooncake-mpirun's status: rank 0's), left a partial summary, or the kill
# did not happen. Runs from the repository root with no arguments.
set -euo pipefail
usage() {
  cat <<'USAGE'
Usage: benchmarks/fault_replay.sh [--build DIR] [--trace FILE] [--requests N] [--time_scale X]

  --build DIR       build folder holding mooncake (default: build)
  --trace FILE      Mooncake trace (default: ../shared/traces/conversation_trace.jsonl)
  --requests N      requests replayed from the start of the trace (default: 120)
  --time_scale X    wall time = model time / X (default: 4)
  -h, --help        this text
USAGE
}
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build" trace="$root/../shared/traces/conversation_trace.jsonl" requests=120 scale=4
while (($# > 0)); do
  case $1 in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --trace) trace=${2:?--trace needs a file}; shift 2 ;;
    --requests) requests=${2:?--requests needs a number}; shift 2 ;;
    --time_scale) scale=${2:?--time_scale needs a number}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "fault_replay: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ -x $build/mooncake ]] || { echo "fault_replay: no $build/mooncake (build first)" >&2; exit 2; }
[[ -r $trace ]] || { echo "fault_replay: trace not found: $trace" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 UCX_WARN_UNUSED_ENV_VARS=n
# Each job runs through job_run (launch/lib-job.sh): stopped by PID, ranks included, whatever
# ends the script (an error, Ctrl-C, SIGTERM), before its run folder goes.
# shellcheck source=launch/lib-job.sh
source "$root/launch/lib-job.sh"
out=$(mktemp -d)
cleanup() { rm -rf "$out"; }
job_traps cleanup

# The replay's wall span: the last arrival of the slice / time scale.
span=$(head -n "$requests" "$trace" | tail -1 | sed 's/.*"timestamp": *\([0-9]*\).*/\1/')
kill_at=$(awk -v s="$span" -v x="$scale" 'BEGIN { printf "%.1fs", s / 1000 / x / 3 }')

run() {  # run NAME [extra mooncake options]
  local name=$1
  shift
  echo "fault_replay: $name run ..." >&2
  # The launcher adds orte_enable_recovery (the job outlives the killed rank) and exits with
  # the status rank 0 reports.
  local code=0
  job_run "$root/launch/mooncake-mpirun" --bin "$build/mooncake" --config "$root/configs/serve/faults.ini" \
    --spread none -- --trace "$trace" --trace.limit "$requests" --time_scale "$scale" \
    --out "$out/$name" "$@" >"$out/$name.log" 2>&1 || code=$?
  if [[ ! -f $out/$name/summary.json ]] || ((code != 0)) ||
    grep -q '"partial": *1' "$out/$name/summary.json"; then
    tail -20 "$out/$name.log" >&2
    echo "fault_replay: the $name run failed (exit $code) or left no final summary.json" >&2
    exit 1
  fi
}
run clean
run faulted --fault.kill "1@$kill_at"
/usr/bin/python3 - "$out/clean/summary.json" "$out/faulted/summary.json" "$kill_at" <<'PY'
import json, sys
clean, faulted = (json.load(open(p)) for p in sys.argv[1:3])
print(f"store rank 1 killed {sys.argv[3]} into the faulted run (a third of the replay)")
print(f"{'run':<9} {'completed':>9} {'rejected':>8} {'lost':>5} {'failed':>6} "
      f"{'mean TTFT s':>11} {'hit %':>6} {'re-replicated':>13}")
for name, s in (("clean", clean), ("faulted", faulted)):
    r, e = s["requests"], s["extra"]
    print(f"{name:<9} {r['completed']:>9} {r['rejected']:>8} {r['lost']:>5} {r['failed']:>6} "
          f"{s['ttft_s']['mean']:>11.2f} {100 * s['prefix_hit']['blocks']:>6.1f} "
          f"{int(e.get('store_objects_rereplicated', 0)):>13}")
r, e = faulted["requests"], faulted["extra"]
ratio = faulted["ttft_s"]["mean"] / clean["ttft_s"]["mean"] if clean["ttft_s"]["mean"] else 0
dead = [d["rank"] for d in faulted["dead_ranks"]]
killed = dead[0] if len(dead) == 1 else -1
delta = r["rejected"] - clean["requests"]["rejected"]
print(f"fault_replay lost={r['lost']} failed={r['failed']} "
      f"corrupt={int(e['kv_checksum_failures'])} killed={killed} "
      f"missing_in_store={int(e.get('prefix_blocks_missing_in_store', 0))} "
      f"rejected_delta={delta} ttft_ratio={ratio:.2f}")
if dead != [1]:
    print(f"fault_replay: dead ranks {dead}, expected [1]: the kill did not happen as planned",
          file=sys.stderr)
    sys.exit(1)
PY
