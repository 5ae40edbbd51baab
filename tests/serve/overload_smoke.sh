#!/usr/bin/env bash
# Overload within budgets, small (benchmarks/overload.sh is the full measurement): a slice of
# the conversation trace at 10x its request rate with early rejection = predicted. The job must
# end normally with nothing lost or failed, reject part of the load (or it was no overload),
# report every high-water mark, keep each role's peak RSS under the bound it computes from its
# budgets, and meet the SLO for >= 95 % of the admitted requests (the benchmark's target is
# 99 %; a loaded 2-core CI machine gets some slack). Under a sanitizer the RSS includes its
# shadow memory and quarantine, and its slowdown is not the job's: those two checks are skipped.
# Usage: overload_smoke.sh MOONCAKE CONFIG TRACE SANITIZERS MPIRUN [mpirun args...]
set -u
mooncake=$1 config=$2 trace=$3 sanitizers=$4
shift 4
if [[ ! -f $trace ]]; then
  echo "SKIP: trace $trace not found (the shared traces sit beside the checkout)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$@" -np 6 "$mooncake" --config "$config" --trace "$trace" --trace.limit 150 --time_scale 4 \
  --load.scale 10 --conductor.early_rejection predicted --job.plots off --out "$dir/run" \
  >"$dir/log" 2>&1
code=$?
tail -6 "$dir/log"
[[ $code -eq 0 ]] || { cat "$dir/log"; echo "FAIL: the job exited $code"; exit 1; }
/usr/bin/python3 - "$dir/run" "$sanitizers" <<'PY'
import csv, json, os, sys
run, sanitizers = sys.argv[1], sys.argv[2]
s = json.load(open(os.path.join(run, "summary.json")))
e, req = s["extra"], s["requests"]
def fail(msg):
    sys.exit("FAIL: " + msg)
for key in ["open_requests_high_water", "decode_waiting_high_water",
            "store_pending_puts_high_water", "prefill_staging_high_water_bytes"]:
    if key not in e:
        fail(f"summary.json has no {key}")
if req["lost"] or req["failed"]:
    fail(f"{req['lost']} lost, {req['failed']} failed")
if req["rejected"] == 0:
    fail("nothing was rejected at 10x: no overload")
if not 0 < e["open_requests_high_water"] <= req["total"]:
    fail(f"open_requests_high_water {e['open_requests_high_water']}")
if e["prefill_staging_high_water_bytes"] <= 0:
    fail("no prefill staging measured")
slo = s["effective_capacity"][0]
rows = list(csv.DictReader(open(os.path.join(run, "requests.csv"))))
admitted = [r for r in rows if r["outcome"] != "rejected"]
ok = [r for r in admitted if r["outcome"] == "completed" and float(r["ttft_s"]) <= slo["ttft_s"]
      and float(r["tbt_s"]) <= slo["tbt_s"]]
attainment = len(ok) / len(admitted)
print(f"admitted {len(admitted)}, within the SLO {len(ok)} ({attainment:.3f}); "
      f"open high water {e['open_requests_high_water']:.0f}")
if sanitizers:
    print(f"under {sanitizers}: the RSS and SLO checks are skipped")
    sys.exit(0)
if attainment < 0.95:
    fail(f"SLO attainment of the admitted {attainment:.3f} < 0.95")
for role in ["conductor", "store", "prefill", "decode"]:
    peak, bound = e[f"peak_rss_{role}_bytes"], e[f"rss_bound_{role}_bytes"]
    print(f"{role}: peak RSS {peak / 2**20:.0f} MiB, bound {bound / 2**20:.0f} MiB")
    if not 0 < peak <= bound:
        fail(f"{role} peak RSS {peak:.0f} B against its bound {bound:.0f} B")
print("PASS")
PY
