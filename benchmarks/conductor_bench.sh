#!/usr/bin/env bash
# The conductor's decisions at scale (no MPI): conductor_bench on both of the paper's traces, the
# synthetic one first, then the conversation one, each at 16 + 16, 128 + 128 and 1,024 + 1,024
# instances (load N/8 x the trace's rate). For each size it simulates the trace once with the
# full evaluation (Algorithm 1 over every instance) and once with the pruned search, replays the
# full run's scheduler calls against fresh schedulers of both kinds on one core (thread CPU time,
# median of 3), and prints decisions/s of both, how many instances each decision evaluated, and
# the mean TTFT of both simulations. Exit 1 when the two searches make any different decision.
# Pinned to one core with taskset when it is there. Takes under a minute (43 s here).
# Usage: benchmarks/conductor_bench.sh [BUILD_DIR] [TRACES_DIR]
# Last line (conversation trace): conductor_bench decisions_per_s_1024=<n> ttft_delta=<relative>
set -euo pipefail
# --help prints the comment block above.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
traces="${2:-$root/../shared/traces}"
bench="$build/benchmarks/conductor_bench"
[[ -x "$bench" ]] || { echo "conductor_bench.sh: $bench not built (cmake --build $build --target conductor_bench)" >&2; exit 2; }
for t in synthetic conversation; do
  [[ -f "$traces/${t}_trace.jsonl" ]] || { echo "conductor_bench.sh: trace not found: $traces/${t}_trace.jsonl" >&2; exit 2; }
done
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
status=0
for t in synthetic conversation; do
  "${pin[@]}" "$bench" --trace "$traces/${t}_trace.jsonl" \
    --config "$root/configs/eval/mooncake.ini" --instances 16,128,1024 --repeat 3 || status=$?
  [[ $status -le 1 ]] || exit "$status"
done
exit "$status"
