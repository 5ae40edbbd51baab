#!/usr/bin/env bash
# mpi_failover_serving (issue 33, items 1 and 2; docs/FAULTS.md "A standby conductor (the
# serving job)"): a serving job of 8 ranks with a standby conductor (roles = conductor:2 store:2
# prefill:2 decode:2), 200 requests of the conversation trace at time scale 4 (18 s of replay),
# and the active conductor (rank 0) SIGKILLed from outside a third of the way into the replay.
# The standby (rank 1) must take over within the failure timeout (2 s here) and the job must
# complete as if nothing happened: launch/mooncake-mpirun exits 0, summary.json says lost 0,
# failed 0, every KV block verified at decode (no checksum failure), rank 0 the only dead rank,
# and carries the failover block with takeover_ms (the old active's last heartbeat to the new
# conductor's first decision); requests.csv names each of the 200 requests once.
# MODE stop (mpi_failover_serving_stopped): rank 0 is SIGSTOPped instead, and resumed once the
# standby took over: the woken former active must learn that it was fenced and end (exit 5),
# leaving exactly one conductor, and the job ends as above.
# FAILOVER_FAILURE_TIMEOUT (default 2s): cluster.failure_timeout (benchmarks/failover_serving.sh).
# Usage: failover_serving_test.sh MODE MOONCAKE CONFIG TRACE LAUNCHER MPIRUN [mpirun args...]
# Exit 77 (a CTest skip) when TRACE is missing.
set -u
mode=$1 mooncake=$2 config=$3 trace=$4 launcher_script=$5 mpirun=$6
shift 6
[[ $mode == kill || $mode == stop ]] || { echo "FAIL: unknown mode '$mode' (kill or stop)"; exit 1; }
if [[ ! -r $trace ]]; then
  echo "SKIP: $trace not found (the real Mooncake traces are read from ../shared/traces)"
  exit 77
fi
dir=$(mktemp -d)
trap 'pkill -KILL -f "^$mooncake .*--out $dir/run" 2>/dev/null; rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  grep -m3 -E "Sanitizer|Tracer caught|runtime error" "$dir/log"
  tail -60 "$dir/log"
  exit 1
}
roles="conductor:2 store:2 prefill:2 decode:2"
requests=200 scale=4
# A third of the replay: the 200th request arrives at 72 s of model time, 18 s of wall time.
kill_after=$(/usr/bin/python3 - "$trace" "$requests" "$scale" <<'PY'
import itertools, json, sys
ts = [json.loads(l)["timestamp"] for l in itertools.islice(open(sys.argv[1]), int(sys.argv[2]))]
print(f"{(ts[-1] - ts[0]) / 1000 / float(sys.argv[3]) / 3:.1f}")
PY
)
args=(--trace "$trace" --trace.limit "$requests" --time_scale "$scale" --roles "$roles"
      --cluster.failure_timeout "${FAILOVER_FAILURE_TIMEOUT:-2s}" --out "$dir/run")
: >"$dir/log"  # before the job's shell opens it: the waits below read it at once
MOONCAKE_MPIRUN_ARGS="$*" "$launcher_script" --mpirun "$mpirun" --bin "$mooncake" \
  --config "$config" --spread none --roles "$roles" -- "${args[@]}" >"$dir/log" 2>&1 &
launcher=$!

# The PID of rank R of this job (its environment names the rank).
rank_pid() {
  for p in $(pgrep -f "^$mooncake .*--out $dir/run"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
      echo "$p"
      return
    fi
  done
}

for _ in $(seq 1 600); do
  grep -q "^serving " "$dir/log" && break
  kill -0 "$launcher" 2>/dev/null || fail "the job ended before its replay started"
  sleep 0.1
done
grep -q "^serving " "$dir/log" || fail "the replay did not start within 60 s"
sleep "$kill_after"
victim=$(rank_pid 0)
[[ -n $victim ]] || fail "no process of rank 0 found"
if [[ $mode == kill ]]; then
  kill -KILL "$victim"
  echo "rank 0 (the active conductor, pid $victim) killed ${kill_after} s into the replay"
else
  kill -STOP "$victim"
  echo "rank 0 (the active conductor, pid $victim) stopped ${kill_after} s into the replay"
  for _ in $(seq 1 300); do
    grep -q "took over as the conductor" "$dir/log" && break
    sleep 0.1
  done
  grep -q "took over as the conductor" "$dir/log" || fail "no takeover within 30 s of the stop"
  sleep 1
  kill -CONT "$victim"
  echo "rank 0 resumed after the takeover"
fi
# The replay's rest and the drain take about 20 s; 180 s means the job hangs.
for _ in $(seq 1 1800); do
  kill -0 "$launcher" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$launcher" 2>/dev/null && fail "the job still runs 180 s after the kill"
wait "$launcher"
rc=$?
[[ -n $(pgrep -f "^$mooncake .*--out $dir/run") ]] && fail "ranks left behind"
grep -E "took over as the conductor|requests  total|DEAD RANK|failover|result" "$dir/log"
summary=$dir/run/summary.json
[[ -f $summary ]] || fail "no summary.json"
/usr/bin/python3 - "$summary" "$dir/run/requests.csv" "$requests" <<'PY' || fail "summary.json check"
import csv, json, sys
s = json.load(open(sys.argv[1])); r = s["requests"]; e = s["extra"]; n = int(sys.argv[3])
def need(cond, what):
    if not cond:
        print("summary.json:", what); sys.exit(1)
need(e.get("partial", 0) == 0, "the final summary is marked partial")
need(r["total"] == n, f"total {r['total']}, expected {n}")
need(r["lost"] == 0 and r["failed"] == 0, f"lost {r['lost']} failed {r['failed']}")
need(r["completed"] > 0, "nothing completed")
need(e["kv_checksum_failures"] == 0, "KV blocks failed their checksum")
need(e["kv_blocks_verified_at_decode"] > 0, "no KV block verified at decode")
dead = [d["rank"] for d in s["dead_ranks"]]
need(dead == [0], f"dead ranks {dead}, expected [0] (the killed active conductor)")
f = s.get("failover")
need(f is not None and f["standby"] and f["took_over"], f"no takeover in the failover block: {f}")
need(f["old_conductor"] == 0, f"old_conductor {f['old_conductor']}")
need(isinstance(f["takeover_ms"], (int, float)) and f["takeover_ms"] > 0,
     f"takeover_ms {f['takeover_ms']}")
need(f["requests_restored"] > 0, "the standby followed no request")
ids = [row["id"] for row in csv.DictReader(open(sys.argv[2]))]
need(len(ids) == n and len(set(ids)) == n, f"requests.csv: {len(ids)} rows, {len(set(ids))} ids")
print(f"failover: completed {r['completed']} rejected {r['rejected']}, takeover_ms "
      f"{f['takeover_ms']:.0f} (ready_ms {f['ready_ms']:.0f}), {f['requests_restored']} requests "
      f"restored, {f['requests_redispatched']} re-dispatched, verified "
      f"{e['kv_blocks_verified_at_decode']:.0f} blocks")
PY
if [[ $mode == stop ]]; then
  grep -q "rank 0 ends: it is no longer the conductor: .*fenced" "$dir/log" ||
    fail "the woken rank 0 was not told it was fenced"
fi
((rc == 0)) || fail "launch/mooncake-mpirun exited $rc (expected 0: nothing lost or failed)"
echo "PASS ($mode)"
