#!/usr/bin/env bash
# Simulator speed: the whole conversation trace (12,031 requests), one config point (Mooncake,
# 8 prefill + 8 decode, kvcache_centric), on one core. Times the whole process (trace parsing
# included). Usage: benchmarks/eval_speed.sh [BUILD_DIR] [TRACE]
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
start=$(date +%s.%N)
"${pin[@]}" "${cmd[@]}" --config "$root/configs/eval/mooncake.ini" --trace "$trace" \
  --out "$out/run" --plots false
end=$(date +%s.%N)
awk -v n="$requests" -v s="$start" -v e="$end" \
  'BEGIN { w = e - s; printf "eval_speed requests_per_s=%.0f wall_s=%.3f\n", n / w, w }'
