#!/usr/bin/env bash
# Overload within budgets: the same slice of the conversation trace replayed by the live job
# (6 ranks, configs/serve/small.ini, early rejection = predicted) at 1x, 3x and 10x its request
# rate (load.scale). Per speed: completed and rejected requests, the SLO attainment of the
# admitted ones (completed within the TTFT SLO and the first TBT threshold, over all admitted),
# the high-water marks of the queues, and each role's peak RSS against the bound the job
# computes from its budgets (src/serve/memory_bounds.h). Last line:
#   overload slo_ok=<lowest attainment> late_refused=<n> rss_ratio=<highest peak/bound>
# (late_refused: admitted requests refused at the decode rank after their prefill, counted in
# slo_ok as misses). Exits 1 when a run failed or left a partial summary.
# Targets: slo_ok >= 0.99, rss_ratio <= 1.0. Runs from the repository root with no arguments.
set -euo pipefail
usage() {
  cat <<'USAGE'
Usage: benchmarks/overload.sh [--build DIR] [--trace FILE] [--requests N] [--time_scale X]
                              [--speeds "1 3 10"] [--model-error F]

  --build DIR       build folder holding mooncake (default: build)
  --trace FILE      Mooncake trace (default: ../shared/traces/conversation_trace.jsonl)
  --requests N      requests replayed from the start of the trace (default: 300)
  --time_scale X    wall time = model time / X (default: 4)
  --speeds LIST     request-rate multipliers, load.scale (default: "1 3 10")
  --model-error F   the ranks' compute takes F x the cost model's prediction
                    (engine.model_error; default 1): with F > 1 the conductor's
                    predictions are wrong, and slo_ok must fall
  -h, --help        this text
USAGE
}
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build" trace="$root/../shared/traces/conversation_trace.jsonl" requests=300 scale=4
speeds="1 3 10" model_error=1
while (($# > 0)); do
  case $1 in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --trace) trace=${2:?--trace needs a file}; shift 2 ;;
    --requests) requests=${2:?--requests needs a number}; shift 2 ;;
    --time_scale) scale=${2:?--time_scale needs a number}; shift 2 ;;
    --speeds) speeds=${2:?--speeds needs a list}; shift 2 ;;
    --model-error) model_error=${2:?--model-error needs a factor}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "overload: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ -x $build/mooncake ]] || { echo "overload: no $build/mooncake (build first)" >&2; exit 2; }
[[ -r $trace ]] || { echo "overload: trace not found: $trace" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 UCX_WARN_UNUSED_ENV_VARS=n
# Each job runs through job_run (launch/lib-job.sh): stopped by PID, ranks included, whatever
# ends the script (an error, Ctrl-C, SIGTERM), before its run folder goes.
# shellcheck source=launch/lib-job.sh
source "$root/launch/lib-job.sh"
out=$(mktemp -d)
cleanup() { rm -rf "$out"; }
job_traps cleanup

for speed in $speeds; do
  echo "overload: ${speed}x ($requests requests, time scale $scale) ..." >&2
  code=0
  job_run mpirun --bind-to none --mca btl self,vader,tcp --mca btl_tcp_if_include lo \
    --mca oob_tcp_if_include lo -np 6 "$build/mooncake" --config "$root/configs/serve/small.ini" \
    --trace "$trace" --trace.limit "$requests" --time_scale "$scale" --load.scale "$speed" \
    --conductor.early_rejection predicted --engine.model_error "$model_error" \
    --job.plots off --out "$out/x$speed" \
    >"$out/x$speed.log" 2>&1 || code=$?
  if [[ ! -f $out/x$speed/summary.json ]] || ((code != 0)) ||
    grep -q '"partial": *1' "$out/x$speed/summary.json"; then
    tail -20 "$out/x$speed.log" >&2
    echo "overload: the ${speed}x run failed (exit $code) or left no final summary.json" >&2
    exit 1
  fi
done

/usr/bin/python3 - "$out" "$speeds" <<'PY'
import csv, json, os, sys
out, speeds = sys.argv[1], sys.argv[2].split()
roles = ["conductor", "store", "prefill", "decode"]
mib = lambda b: b / 2**20
lowest_ok, highest_ratio, late_refused = 1.0, 0.0, 0
print(f"{'speed':>5} {'total':>5} {'done':>5} {'rej':>5} {'lost':>4} {'slo_ok':>7} "
      f"{'open_hw':>7} {'dec_wait_hw':>11} {'puts_hw':>7} {'stage_hw MiB':>12}  "
      + "  ".join(f"{r} RSS/bound MiB" for r in roles))
for speed in speeds:
    run = os.path.join(out, f"x{speed}")
    s = json.load(open(os.path.join(run, "summary.json")))
    e, req = s["extra"], s["requests"]
    ttft_slo = s["effective_capacity"][0]["ttft_s"]
    tbt_slo = s["effective_capacity"][0]["tbt_s"]
    rows = list(csv.DictReader(open(os.path.join(run, "requests.csv"))))
    # Admitted: everything that passed the check at arrival, including the requests refused
    # later, when their KV reached the decode rank (decode_overload, after using prefill time).
    late = [r for r in rows if r["outcome"] == "rejected" and r["reject_reason"] == "decode_overload"]
    late_refused += len(late)
    admitted = [r for r in rows if r["outcome"] != "rejected"] + late
    ok = [r for r in admitted if r["outcome"] == "completed"
          and float(r["ttft_s"]) <= ttft_slo and float(r["tbt_s"]) <= tbt_slo]
    attainment = len(ok) / len(admitted) if admitted else 1.0
    lowest_ok = min(lowest_ok, attainment)
    cells = []
    for r in roles:
        peak, bound = e[f"peak_rss_{r}_bytes"], e[f"rss_bound_{r}_bytes"]
        highest_ratio = max(highest_ratio, peak / bound)
        cells.append(f"{mib(peak):7.0f}/{mib(bound):<7.0f}")
    print(f"{speed+'x':>5} {req['total']:>5} {req['completed']:>5} {req['rejected']:>5} "
          f"{req['lost']:>4} {attainment:7.3f} {e['open_requests_high_water']:7.0f} "
          f"{e['decode_waiting_high_water']:11.0f} {e['store_pending_puts_high_water']:7.0f} "
          f"{mib(e['prefill_staging_high_water_bytes']):12.1f}  " + "  ".join(cells))
    err = s.get("ttft_prediction_error", {})
    print(f"      TTFT prediction error p50 {100 * err.get('p50', 0):.1f}% "
          f"p90 {100 * err.get('p90', 0):.1f}%")
print(f"SLO: TTFT <= {ttft_slo:g} s and TBT <= {tbt_slo:g} s; attainment over admitted requests "
      "(those rejected at arrival are not admitted; lost, failed and late-refused ones, turned "
      "away at the decode rank after their prefill, count as misses)")
print(f"overload slo_ok={lowest_ok:.3f} late_refused={late_refused} rss_ratio={highest_ratio:.3f}")
PY
