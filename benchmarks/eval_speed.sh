#!/usr/bin/env bash
# Simulator speed: the whole conversation trace (12,031 requests), one config point (Mooncake,
# 8 prefill + 8 decode, kvcache_centric), on one core. Times the whole process (trace parsing
# included). First the same point with one global pool of 6553 blocks, which runs the store's
# metadata master on the virtual clock (a line eval_speed_store_master ...), then the plain point.
# Usage: benchmarks/eval_speed.sh [BUILD_DIR] [TRACE]
# Last line: eval_speed requests_per_s=<r> wall_s=<t>
set -euo pipefail
# --help prints the comment block above.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
trace="${2:-$root/../shared/traces/conversation_trace.jsonl}"
[[ -f "$trace" ]] || { echo "eval_speed: trace not found: $trace" >&2; exit 2; }

# Prefer `mooncake eval`; fall back to the stand-alone driver of the same library.
if [[ -x "$build/mooncake" ]] && "$build/mooncake" eval --help >/dev/null 2>&1; then
  cmd=("$build/mooncake" eval)
elif [[ -x "$build/benchmarks/eval_driver" ]]; then
  cmd=("$build/benchmarks/eval_driver")
else
  echo "eval_speed: build $build has neither 'mooncake eval' nor benchmarks/eval_driver" >&2
  exit 2
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
requests=$(grep -c . "$trace")
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
# run NAME [extra options]: one timed run, one line NAME requests_per_s=<r> wall_s=<t>.
run() {
  local name=$1 start end
  shift
  start=$(date +%s.%N)
  "${pin[@]}" "${cmd[@]}" --config "$root/configs/eval/mooncake.ini" --trace "$trace" \
    --out "$out/$name" --plots false "$@" >"$out/$name.log"
  end=$(date +%s.%N)
  tail -n +2 "$out/$name.log" | head -6
  awk -v name="$name" -v n="$requests" -v s="$start" -v e="$end" \
    'BEGIN { w = e - s; printf "%s requests_per_s=%.0f wall_s=%.3f\n", name, n / w, w }'
}
run eval_speed_store_master --store.global_pool true --store.capacity_blocks 6553
run eval_speed
