#!/usr/bin/env bash
# Forged data-path messages against a running job (issue 28): while a 4-rank serving job runs,
# forged_data_probe (not started by mpirun) connects to every rank's UCX worker and sends each
# 20 writes and 20 read requests that name another job rank as their sender, and read responses
# and write acknowledgements for tokens 1..10,000. Taken, they would write into registered memory,
# answer reads with the job's bytes, or complete other ranks' transfers with the probe's bytes.
# Refused: the job completes every request with every KV block verified, summary.json counts at
# least every forged write and read (refused_data_messages; an acknowledgement is counted only if
# its token was live, and tokens are random 64-bit values), and each rank logs the refusal once.
# Usage: forged_data.sh MOONCAKE FORGED_DATA_PROBE MPIRUN [mpirun args...]
set -u
mooncake=$1 probe=$2
shift 2
dir=$(mktemp -d)
job=""
cleanup() {
  [[ -n $job ]] && kill -9 "$job" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
export UCX_WARN_UNUSED_ENV_VARS=n

requests=600
"$@" -np 4 "$mooncake" --synthetic.requests $requests --job.plots off --out "$dir/run" \
  --job.address_file "$dir/addresses" >"$dir/job.log" 2>&1 &
job=$!
for _ in $(seq 600); do  # 60 s for the bootstrap
  [[ -f $dir/addresses ]] && break
  kill -0 "$job" 2>/dev/null || { cat "$dir/job.log"; fail "the job ended before its bootstrap"; }
  sleep 0.1
done
[[ -f $dir/addresses ]] || fail "no address file within 60 s"

timeout 60 "$probe" "$dir/addresses" 20 10000 >"$dir/probe.log" 2>&1
code=$?
cat "$dir/probe.log"
[[ $code -eq 0 ]] || fail "forged_data_probe exited $code"
read -r writes reads < <(sed -n 's/^probe: sent \([0-9]*\) writes, \([0-9]*\) reads, .*/\1 \2/p' "$dir/probe.log")
[[ -n ${writes:-} && -n ${reads:-} ]] || fail "the probe did not say what it sent"
kill -0 "$job" 2>/dev/null || fail "the job had ended before the probe was done (the check needs it running)"

wait "$job"
code=$?
job=""
tail -4 "$dir/job.log"
[[ $code -eq 0 ]] || { cat "$dir/job.log"; fail "the job exited $code"; }
/usr/bin/python3 - "$dir/run/summary.json" "$requests" "$((writes + reads))" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))
requests, forged = int(sys.argv[2]), int(sys.argv[3])
e = s["extra"]
done, refused = s["requests"]["completed"], int(e["refused_data_messages"])
print(f"completed {done} of {requests}, refused_data_messages {refused}, forged writes and "
      f"reads {forged}, KV checksum failures {int(e['kv_checksum_failures'])}")
if done != requests:
    sys.exit(f"FAIL: {done} of {requests} requests completed")
if e["kv_checksum_failures"] != 0:
    sys.exit("FAIL: KV blocks failed their checksum: a forgery landed")
if refused < forged:
    sys.exit(f"FAIL: summary.json counts {refused} refused data messages, the probe forged {forged}")
PY
logged=$(grep -c "refusing data-path messages that claim to come from rank" "$dir/job.log")
[[ $logged -eq 4 ]] || fail "the refusal was logged $logged times (once on each of the 4 ranks expected)"
echo "PASS: $((writes + reads)) forged writes and reads refused and counted, forged acks ignored; the job completed"
