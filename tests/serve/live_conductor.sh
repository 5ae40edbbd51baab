#!/usr/bin/env bash
# The conductor's decisions on live ranks (README "request's path"), on a slice of the real
# conversation trace (a CTest skip without it):
#   early_rejection  1 decode rank and a tight TBT SLO (17 ms), so the decode pool is the
#                    bottleneck. With conductor.early_rejection = off no request is rejected for a
#                    TBT reason at arrival; with predicted some are (tbt_slo_predicted > 0), and
#                    each rejection is in requests.csv with its reason, the reasons adding up to
#                    summary.json's count.
#   remote_fetch     300 requests: kvcache_centric with balancing_threshold 1 fetches prefixes held by another
#                    instance (scheduler_fetches > 0) and the prefill ranks read every reused
#                    block from the store (none missing); cache_aware never fetches.
# Usage: live_conductor.sh early_rejection|remote_fetch MOONCAKE TRACE MPIRUN [mpirun args...]
set -u
mode=$1 mooncake=$2 trace=$3
shift 3
if [[ ! -f $trace ]]; then
  echo "SKIP: trace $trace not found (the shared traces sit beside the checkout)"
  exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-live-conductor.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# run NAME ARGS...: one 6-rank live run of $limit requests into $dir/NAME. A 10 s failure
# timeout: these runs check the conductor's decisions, not failure detection (the mpi_fault_*
# tests do). Under the default 1 s, CI's run of dbc4421 lost a sanitizer run to a prefill rank that
# waited 1.05 s for the conductor's heartbeat reply beside three other tests.
run() {
  local name=$1
  shift
  "$@" -np 6 "$mooncake" --roles "conductor:1 store:1 prefill:3 decode:1" --trace "$trace" \
    --trace.limit "$limit" --time_scale 8 --store.dram 256MiB --decode.buffer 128MiB \
    --job.plots off --cluster.failure_timeout 10s --job.rpc_timeout 10s --out "$dir/$name" \
    "${run_args[@]}" \
    >"$dir/$name.log" 2>&1
  local code=$?
  [[ $code -eq 0 ]] || { tail -20 "$dir/$name.log"; fail "run $name exited $code"; }
  grep -E "^requests|^prefix|^result" "$dir/$name.log" | sed "s/^/$name: /"
}

# check NAME PYTHON: runs the python check on $dir/NAME's summary.json and requests.csv.
check() {
  /usr/bin/python3 - "$dir/$1/summary.json" "$dir/$1/requests.csv" "$1" <<<"$2" || exit 1
}

case $mode in
  early_rejection)
    limit=150
    for er in off predicted; do
      run_args=(--slo.tbt 17ms --conductor.early_rejection "$er")
      run "$er" "$@"
    done
    common='
import csv, json, sys
s = json.load(open(sys.argv[1])); rows = list(csv.DictReader(open(sys.argv[2]))); name = sys.argv[3]
r, rej = s["requests"], s["rejections"]
def need(ok, what):
    if not ok: print("FAIL: %s: %s (rejections %s)" % (name, what, rej)); sys.exit(1)
need(r["completed"] + r["rejected"] == r["total"] == 150, "requests unaccounted for: %s" % r)
need(sum(rej.values()) == r["rejected"], "the reasons do not add up to rejected")
csv_reasons = {}
for row in rows:
    if row["outcome"] == "rejected":
        csv_reasons[row["reject_reason"]] = csv_reasons.get(row["reject_reason"], 0) + 1
need(csv_reasons == rej, "requests.csv reasons %s differ from summary.json" % csv_reasons)
'
    check off "$common
need(rej.get('tbt_slo_predicted', 0) == 0 and rej.get('tbt_slo_current', 0) == 0,
     'early_rejection = off rejected for a TBT reason at arrival')"
    check predicted "$common
need(rej.get('tbt_slo_predicted', 0) > 0, 'early_rejection = predicted rejected nothing for TBT')"
    echo "PASS: off rejects no request for TBT at arrival, predicted does; reasons add up"
    ;;
  remote_fetch)
    limit=300  # the simulator makes 13 remote fetches in this slice, 1 in the first 150
    for p in kvcache_centric cache_aware; do
      run_args=(--conductor.policy "$p" --conductor.balancing_threshold 1 --conductor.admission false)
      run "$p" "$@"
    done
    check kvcache_centric '
import json, sys
x = json.load(open(sys.argv[1]))["extra"]
if not x["scheduler_fetches"] > 0: print("FAIL: kvcache_centric fetched no prefix"); sys.exit(1)
if x["prefix_blocks_missing_in_store"] != 0 or x["kv_checksum_failures"] != 0:
    print("FAIL: reused blocks missing or corrupt: %s" % x); sys.exit(1)
if not x["prefix_blocks_loaded_from_store"] >= x["scheduler_fetched_blocks"] > 0:
    print("FAIL: fewer blocks read from the store than fetched: %s" % x); sys.exit(1)
print("kvcache_centric: %d fetches, %d blocks fetched, %d prefix blocks read from the store"
      % (x["scheduler_fetches"], x["scheduler_fetched_blocks"], x["prefix_blocks_loaded_from_store"]))'
    check cache_aware '
import json, sys
x = json.load(open(sys.argv[1]))["extra"]
if x["scheduler_fetches"] != 0: print("FAIL: cache_aware fetched %d prefixes" % x["scheduler_fetches"]); sys.exit(1)'
    echo "PASS: kvcache_centric fetches remote prefixes, read from the store; cache_aware never"
    ;;
  *) fail "unknown mode '$mode' (early_rejection | remote_fetch)" ;;
esac
