#!/usr/bin/env bash
# Mean TTFT of the four prefill policies (paper Fig. 5) on live ranks and in the simulator, on
# the same trace slice and config, in one run. Prefill is the bottleneck in the config, so the
# order should be random > load_balance > cache_aware >= kvcache_centric.
# Usage: benchmarks/serve_policies.sh [BUILD_DIR] [TRACE] [LIMIT] [TIME_SCALE]
# Last line: serve_policies order_ok=<0|1> live_ttft=<r,lb,ca,kc> sim_ttft=<r,lb,ca,kc>
set -euo pipefail
# --help prints the comment block above.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
trace=${2:-$root/../shared/traces/conversation_trace.jsonl}
limit=${3:-300}
scale=${4:-8}
config=$root/configs/serve/policies.ini
# Each job runs through job_run (launch/lib-job.sh): stopped by PID, ranks included, whatever
# ends the script (an error, Ctrl-C, SIGTERM), (the run folders are kept: their path is printed).
# shellcheck source=launch/lib-job.sh
source "$root/launch/lib-job.sh"
out=$(mktemp -d)
job_traps
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 UCX_WARN_UNUSED_ENV_VARS=n
mean_ttft() { /usr/bin/python3 -c "import json,sys; print('%.2f' % json.load(open(sys.argv[1]))['ttft_s']['mean'])" "$1"; }
printf '%-16s %12s %12s %8s\n' policy "live TTFT s" "sim TTFT s" "gap"
live_all=() sim_all=()
for p in random load_balance cache_aware kvcache_centric; do
  job_run mpirun -np 7 --bind-to none --mca btl self,vader,tcp --mca btl_tcp_if_include lo \
    --mca oob_tcp_if_include lo "$build/mooncake" --config "$config" --trace "$trace" \
    --trace.limit "$limit" --time_scale "$scale" --conductor.policy "$p" --out "$out/live_$p" \
    >"$out/live_$p.log" 2>&1 || { tail -20 "$out/live_$p.log"; exit 1; }
  "$build/mooncake" eval --config "$config" --trace "$trace" --trace.limit "$limit" \
    --conductor.policy "$p" --plots false --out "$out/sim_$p" >"$out/sim_$p.log" 2>&1
  l=$(mean_ttft "$out/live_$p/summary.json")
  s=$(mean_ttft "$out/sim_$p/summary.json")
  live_all+=("$l") sim_all+=("$s")
  printf "%-16s %12s %12s %7.1f%%\n" "$p" "$l" "$s" "$(/usr/bin/python3 -c "print(100 * ($l - $s) / $s)")"
done
ok=$(/usr/bin/python3 -c "
r, lb, ca, kc = map(float, '${live_all[*]}'.split())
print(int(r > lb > ca >= kc))")
echo "run folders: $out"
echo "serve_policies order_ok=$ok live_ttft=$(IFS=,; echo "${live_all[*]}") sim_ttft=$(IFS=,; echo "${sim_all[*]}")"
