#!/usr/bin/env bash
# A 64-point `mooncake eval` sweep (8 load scales x 8 TBT thresholds) under `mpirun -np 1` and
# `-np 2`, same trace slice, in one run: the points are spread over the ranks, so 2 ranks should
# take about half the time of 1.
# Usage: benchmarks/eval_sweep_speed.sh [BUILD_DIR] [TRACE] [LIMIT]
# Last line: eval_sweep points=64 np1_s=<t> np2_s=<t> speedup=<x>
set -euo pipefail
# --help prints the comment block above.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
trace=${2:-$root/../shared/traces/conversation_trace.jsonl}
limit=${3:-3000}
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Each job runs through job_run (launch/lib-job.sh): stopped by PID, ranks included, whatever
# ends the script (an error, Ctrl-C, SIGTERM), before its run folder goes.
# shellcheck source=launch/lib-job.sh
source "$root/launch/lib-job.sh"
out=$(mktemp -d)
cleanup() { rm -rf "$out"; }
job_traps cleanup
args=(eval --config "$root/configs/eval/mooncake.ini" --trace "$trace" --trace.limit "$limit"
  --plots false --sweep load.scale=1,1.25,1.5,1.75,2,2.25,2.5,3
  --sweep slo.tbt=50ms,75ms,100ms,150ms,200ms,250ms,300ms,400ms)
declare -A wall
for np in 1 2; do
  start=$(date +%s.%N)
  job_run mpirun -np "$np" --bind-to core --mca btl self,vader --mca oob_tcp_if_include lo \
    "$build/mooncake" "${args[@]}" --out "$out/np$np" >"$out/np$np.log" 2>&1 ||
    { tail -20 "$out/np$np.log"; exit 1; }
  wall[$np]=$(/usr/bin/python3 -c "import time; print('%.2f' % (time.time() - $start))")
  rows=$(($(wc -l <"$out/np$np/sweep.csv") - 1))
  echo "np $np: $rows points in ${wall[$np]} s"
done
cmp <(cut -d, -f1-12 "$out/np1/sweep.csv") <(cut -d, -f1-12 "$out/np2/sweep.csv") >/dev/null &&
  echo "sweep.csv of np 1 and np 2 agree (first 12 columns)"
echo "eval_sweep points=64 np1_s=${wall[1]} np2_s=${wall[2]} speedup=$(/usr/bin/python3 -c "print('%.2f' % (${wall[1]} / ${wall[2]}))")"
