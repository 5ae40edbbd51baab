#!/usr/bin/env bash
# The job token against a foreign process: while a 4-rank serving job runs, foreign_probe (not
# started by mpirun) connects to every rank's UCX worker with the right address but a wrong
# token and sends each the conductor's stop and shutdown messages. Obeyed, they would end the
# job early; refused, the job completes every request, summary.json counts every frame the probe
# sent (rpc_refused_frames), and each rank logs the refusal once, not per frame.
# Usage: foreign_token.sh MOONCAKE FOREIGN_PROBE MPIRUN [mpirun args...]
set -u
mooncake=$1 probe=$2
shift 2
dir=$(mktemp -d)
# The job runs in a session of its own and is stopped by PID on any exit, its ranks included
# (launch/lib-job.sh: killing mpirun alone left them running).
# shellcheck source=launch/lib-job.sh
source "$(dirname "$0")/../../launch/lib-job.sh"
job=""
cleanup() { rm -rf "$dir"; }
job_traps cleanup
fail() { echo "FAIL: $*"; exit 1; }
export UCX_WARN_UNUSED_ENV_VARS=n

requests=300  # about 15 s of replay: the probe, a sanitizer build too, must be done before it ends
# A 10 s failure timeout: this test checks the refusals, not failure detection (docs/RELIABILITY.md,
# "Three tests on the default 1 s failure timeout"). No admission control: every request must
# complete, and a job slowed by the tests beside it rejects some for their SLOs.
job_start "$@" -np 4 "$mooncake" --synthetic.requests $requests --job.plots off --out "$dir/run" \
  --cluster.failure_timeout 10s --job.rpc_timeout 10s --job.address_file "$dir/addresses" \
  --conductor.admission false --conductor.early_rejection off >"$dir/job.log" 2>&1
job=$JOB_PID
for _ in $(seq 600); do  # 60 s for the bootstrap
  [[ -f $dir/addresses ]] && break
  kill -0 "$job" 2>/dev/null || { cat "$dir/job.log"; fail "the job ended before its bootstrap"; }
  sleep 0.1
done
[[ -f $dir/addresses ]] || fail "no address file within 60 s"

timeout 30 "$probe" "$dir/addresses" 20 >"$dir/probe.log" 2>&1
code=$?
cat "$dir/probe.log"
[[ $code -eq 0 ]] || fail "foreign_probe exited $code"
sent=$(sed -n 's/^probe: sent \([0-9]*\) frames to 3 ranks$/\1/p' "$dir/probe.log")
[[ -n $sent ]] || fail "the probe did not say what it sent"
kill -0 "$job" 2>/dev/null || fail "the job had ended before the probe was done (the check needs it running)"

wait "$job"
code=$?
job_forget "$job"
job=""
tail -4 "$dir/job.log"
[[ $code -eq 0 ]] || { cat "$dir/job.log"; fail "the job exited $code"; }
/usr/bin/python3 - "$dir/run/summary.json" "$requests" "$sent" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))
requests, sent = int(sys.argv[2]), int(sys.argv[3])
done = s["requests"]["completed"]
refused = int(s["extra"]["rpc_refused_frames"])
print(f"completed {done} of {requests}, rpc_refused_frames {refused}, probe sent {sent}")
if done != requests:
    sys.exit(f"FAIL: {done} of {requests} requests completed: the job obeyed the probe")
if refused != sent:
    sys.exit(f"FAIL: summary.json counts {refused} refused frames, the probe sent {sent}")
PY
logged=$(grep -c "refusing rpc frames that claim to come from rank 0: wrong job token" "$dir/job.log")
[[ $logged -eq 3 ]] || fail "the refusal was logged $logged times (once on each of the 3 ranks expected)"
echo "PASS: $sent frames with a wrong token refused and counted, logged once per rank; the job completed"
