#!/usr/bin/env bash
# benchmarks/http_replay.py, small: 6 requests of the conversation trace sent over HTTP to a job
# the script starts (the reference engine, tiny), streamed at the trace's arrival times. Every
# request must complete or get a 429 with Retry-After (no other error), the client's TTFT of each
# completed request must be paired with the job's own (requests.csv), and the result file and the
# last line must say so.
# Usage: http_replay_smoke.sh BUILD_DIR TRACE MPIRUN [mpirun args...]
set -u
build=$1 trace=$2 mpirun=$3
shift 3
if [[ ! -f $trace ]]; then
  echo "SKIP: trace $trace not found (the shared traces sit beside the checkout)"
  exit 77
fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# A 10 s failure timeout: the test checks the HTTP replay, not failure detection
# (docs/RELIABILITY.md, "Three tests on the default 1 s failure timeout").
MOONCAKE_MPIRUN_ARGS="$*" "$root/benchmarks/http_replay.py" --build "$build" --trace "$trace" \
  --mpirun "$mpirun" --requests 6 --out "$dir" \
  --job_args "--cluster.failure_timeout 10s --job.rpc_timeout 10s" >"$dir/out" 2>&1
code=$?
cat "$dir/out"
[[ $code -eq 0 ]] || { echo "FAIL: http_replay.py exited $code"; exit 1; }
last=$(tail -1 "$dir/out")
[[ $last =~ ^http_replay\ requests=6\ ttft_client_vs_job=[0-9.]+\ errors=0$ ]] ||
  { echo "FAIL: last line '$last'"; exit 1; }
/usr/bin/python3 - "$dir/http_replay.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
done = r["completed"]
if done + r["rejected_429"] != 6 or done == 0:
    sys.exit(f"FAIL: {done} completed and {r['rejected_429']} rejected of 6")
if r["job_same_requests"]["ttft_s"]["n"] != done or r["client"]["ttft_s"]["n"] != done:
    sys.exit(f"FAIL: {done} completed, TTFT paired for {r['job_same_requests']['ttft_s']['n']}")
if r["job_summary"]["requests"]["total"] != 6:
    sys.exit(f"FAIL: the job's summary.json counts {r['job_summary']['requests']}")
print(f"PASS: {done} completed, client TTFT p50 {r['client']['ttft_s']['p50']:.3f} s, job's "
      f"{r['job_same_requests']['ttft_s']['p50']:.3f} s")
PY
