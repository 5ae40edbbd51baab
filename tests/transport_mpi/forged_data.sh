#!/usr/bin/env bash
# Forged data-path messages against a running job (issue 28): while a 4-rank job runs,
# forged_data_probe (not started by mpirun) connects to every rank's UCX worker and sends each
# 20 writes and 20 read requests that name another job rank as their sender, and read responses
# and write acknowledgements for tokens 1..10,000. Taken, they would write into registered memory,
# answer reads with the job's bytes, or complete other ranks' transfers with the probe's bytes.
# Refused: the job does all its work with every byte verified, summary.json counts at least every
# forged write and read (refused_data_messages; an acknowledgement is counted only if its token
# was live, and tokens are random 64-bit values), by the endpoint each came on
# (refused_data_messages_by_peer: the probe's endpoints made from the address file are neither a
# rank's nor an attached process's, so "unknown"), and each rank logs the refusal once.
#   serve: a serving job; all 600 requests complete with every KV block verified.
#   store: a store-service job (job.mode = store: a master and 3 store ranks), forged four times
#          over, and 20 writes and 20 reads more (naming store rank 1) on each of two connections
#          to the master's listener: one attached with the job token ("attached:127.0.0.1:PORT"),
#          one not ("unadmitted:127.0.0.1:PORT"). Meanwhile a C++ client outside the job
#          (client_peer) puts 7 values of 1 B to 64 MiB and reads them back verified, round after
#          round while the probe runs and once after; `mooncake store stop` then ends the job,
#          whose summary counts no error.
# Usage: forged_data.sh serve MOONCAKE FORGED_DATA_PROBE MPIRUN [mpirun args...]
#        forged_data.sh store MOONCAKE FORGED_DATA_PROBE CLIENT_PEER MPIRUN [mpirun args...]
set -u
mode=$1 mooncake=$2 probe=$3
shift 3
client=""
if [[ $mode == store ]]; then
  client=$1
  shift
elif [[ $mode != serve ]]; then
  echo "usage: forged_data.sh serve|store MOONCAKE FORGED_DATA_PROBE [CLIENT_PEER] MPIRUN ..." >&2
  exit 2
fi
dir=$(mktemp -d)
# The job runs in a session of its own and is stopped by PID on any exit, its ranks included
# (launch/lib-job.sh: killing mpirun alone left them running).
# shellcheck source=launch/lib-job.sh
source "$(dirname "$0")/../../launch/lib-job.sh"
job="" probe_pid=""
cleanup() {
  if [[ -n $probe_pid ]]; then kill -9 "$probe_pid" 2>/dev/null; fi
  rm -rf "$dir"
}
job_traps cleanup
fail() { echo "FAIL: $*"; exit 1; }
export UCX_WARN_UNUSED_ENV_VARS=n

requests=600
if [[ $mode == serve ]]; then
  # A 10 s failure timeout: this test checks the refusals, not failure detection. No admission
  # control: every request must complete, and a job slowed by the tests beside it rejected 135 of
  # 600 for their SLOs (a stress run of the sanitizer build, five tests at once).
  job_start "$@" -np 4 "$mooncake" --synthetic.requests $requests --job.plots off \
    --cluster.failure_timeout 10s --job.rpc_timeout 10s --out "$dir/run" \
    --job.address_file "$dir/addresses" --conductor.admission false \
    --conductor.early_rejection off >"$dir/job.log" 2>&1
else
  # 3 x 512 MiB: at most 9 rounds of 81 MiB (8 while the probe runs, 1 after) fit in DRAM.
  job_start "$@" -np 4 "$mooncake" --job.mode store --store.dram 512MiB --out "$dir/run" \
    --job.address_file "$dir/addresses" >"$dir/job.log" 2>&1
fi
job=$JOB_PID
ready=$dir/addresses
[[ $mode == store ]] && ready=$dir/run/connect.json
for _ in $(seq 600); do  # 60 s for the bootstrap
  [[ -f $ready ]] && break
  kill -0 "$job" 2>/dev/null || { cat "$dir/job.log"; fail "the job ended before its bootstrap"; }
  sleep 0.1
done
[[ -f $ready ]] || fail "no $(basename "$ready") within 60 s"

passes=1
# A pass takes 0.2 to 0.4 s (more on a busy machine), a client round 1 to 2 s.
[[ $mode == store ]] && passes=4
# In store mode the probe also forges on two connections to the master's listener: one attached
# with the job token (a process that may use the store must still not pass for a rank), one not.
listener=()
[[ $mode == store ]] && listener=("$dir/run/connect.json")
timeout 60 "$probe" "$dir/addresses" 20 10000 $passes "${listener[@]}" >"$dir/probe.log" 2>&1 &
probe_pid=$!
rounds=0 overlapped=0
if [[ $mode == store ]]; then
  # A round: a client attaches, puts, and another attaches and reads back, verifying every byte.
  round() {
    local started=$EPOCHREALTIME
    "$client" "$dir/run/connect.json" put "r$1" >>"$dir/client.log" 2>&1 &&
      "$client" "$dir/run/connect.json" verify "r$1" >>"$dir/client.log" 2>&1 ||
      { cat "$dir/client.log"; fail "client round $1 failed while the probe forged messages"; }
    rounds=$((rounds + 1))
    local took
    took=$(awk "BEGIN { printf \"%.2f\", $EPOCHREALTIME - $started }")
    echo "client: round $1 put and verified 7 values in $took s"
  }
  while kill -0 "$probe_pid" 2>/dev/null && ((rounds < 8)); do
    overlapped=$((overlapped + 1))
    round $((rounds + 1))
  done
fi
wait "$probe_pid"
code=$?
probe_pid=""
cat "$dir/probe.log"
[[ $code -eq 0 ]] || fail "forged_data_probe exited $code"
read -r writes reads < <(sed -n 's/^probe: sent \([0-9]*\) writes, \([0-9]*\) reads, .*/\1 \2/p' "$dir/probe.log")
[[ -n ${writes:-} && -n ${reads:-} ]] || fail "the probe did not say what it sent"
read -r attached unattached < <(sed -n 's/^probe: through the listener: \([0-9]*\) attached, \([0-9]*\) unattached/\1 \2/p' "$dir/probe.log")
[[ $mode == serve || -n ${attached:-} ]] || fail "the probe did not say what it sent through the listener"
kill -0 "$job" 2>/dev/null || fail "the job had ended before the probe was done (the check needs it running)"

if [[ $mode == store ]]; then
  ((overlapped > 0)) || fail "no client round started while the probe ran"
  round $((rounds + 1))
  echo "client: $rounds rounds of 7 values put and verified, $overlapped started while the probe ran"
  timeout 90 "$mooncake" store stop "$dir/run/connect.json" >>"$dir/client.log" 2>&1 ||
    { cat "$dir/client.log"; fail "mooncake store stop failed"; }
fi
wait "$job"
code=$?
job_forget "$job"
job=""
tail -4 "$dir/job.log"
[[ $code -eq 0 ]] || { cat "$dir/job.log"; fail "the job exited $code"; }
/usr/bin/python3 - "$mode" "$dir/run/summary.json" "$requests" "$((writes + reads))" \
  "${attached:-0}" "${unattached:-0}" <<'PY' || exit 1
import json, sys
mode, path = sys.argv[1], sys.argv[2]
requests, direct, attached, unattached = (int(a) for a in sys.argv[3:])
forged = direct + attached + unattached
s = json.load(open(path))
if mode == "serve":
    e = s["extra"]
    done, refused = s["requests"]["completed"], int(e["refused_data_messages"])
    print(f"completed {done} of {requests}, KV checksum failures {int(e['kv_checksum_failures'])}")
    if done != requests:
        sys.exit(f"FAIL: {done} of {requests} requests completed")
    if e["kv_checksum_failures"] != 0:
        sys.exit("FAIL: KV blocks failed their checksum: a forgery landed")
else:
    refused = int(s["refused_data_messages"])
    print(f"store job: {s['objects']} objects, errors {s['errors']}")
    if s["errors"] != 0:
        sys.exit(f"FAIL: the store job counted {s['errors']} errors")
by_peer = s.get("refused_data_messages_by_peer")
print(f"refused_data_messages {refused}, by peer {json.dumps(by_peer)}, forged writes and "
      f"reads {forged}")
if refused < forged:
    sys.exit(f"FAIL: summary.json counts {refused} refused data messages, the probe forged {forged}")
if by_peer is None:
    sys.exit("FAIL: summary.json has no refused_data_messages_by_peer")
if sum(by_peer.values()) != refused:
    sys.exit(f"FAIL: refused_data_messages_by_peer sums to {sum(by_peer.values())}, not {refused}")
# The probe's endpoints made from the address file are neither a rank's nor an attached process's.
expected = {"unknown": direct}
if mode == "store":
    expected["attached:127.0.0.1:"] = attached
    expected["unadmitted:127.0.0.1:"] = unattached
for name, n in expected.items():
    got = sum(v for k, v in by_peer.items() if k == name or (name.endswith(":") and k.startswith(name)))
    if got < n:
        sys.exit(f"FAIL: {got} refusals counted under {name}, the probe forged {n} there")
PY
logged=$(grep -c "refusing data-path messages that claim to come from rank" "$dir/job.log")
[[ $logged -eq 4 ]] || fail "the refusal was logged $logged times (once on each of the 4 ranks expected)"
echo "PASS ($mode): $((writes + reads)) forged writes and reads refused and counted by peer, forged acks ignored; the job did all its work"
