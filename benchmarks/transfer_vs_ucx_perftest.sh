#!/usr/bin/env bash
# Runs ucx_perftest (best of ucp_put_bw, ucp_get, ucp_am_bw, tag_bw) and transfer_bench with the
# same UCX_TLS, sizes, core binding (two processes, cores 0 and 1) and buffer footprint (one
# block-sized buffer, as ucx_perftest), in one run. Prints per size and operation our GB/s, the
# baseline's GB/s and the ratio, then a labelled large-footprint (1 GiB) row that is not part of
# the ratio, then the p50 of a 4 KiB read with one request in flight against ucp_get's p50.
# Last line: "transfer_vs_ucx_perftest min_ratio=<r> tls=<tls> latency_ratio=<r>".
#
#   benchmarks/transfer_vs_ucx_perftest.sh --tls shm|tcp [--build DIR] [--sizes "64KiB 1MiB 16MiB"]
#       [--repeats N] [--duration 2s] [--depth 2] [--bench-args "..."] [--latency-only]
# With --repeats N every measurement runs N times and the median is used. --depth is how many
# batches of 128 transfer_bench keeps in flight (2: the next batch is posted while the last one
# drains, as ucx_perftest keeps its window full; 1 leaves the link idle at every batch boundary).
# --latency-only runs just the 4 KiB latency pair (shm), max(3, N) rounds; min_ratio is then n/a.
set -euo pipefail

TLS_NAME=shm
BUILD=${BUILD:-$(cd "$(dirname "$0")/.." && pwd)/build}
SIZES="64KiB 1MiB 16MiB"
REPEATS=1
DURATION=2s
BENCH_ARGS=""
DEPTH=2
LATENCY_ONLY=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --tls) TLS_NAME=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --bench-args) BENCH_ARGS=$2; shift 2 ;;
    --depth) DEPTH=$2; shift 2 ;;
    --latency-only) LATENCY_ONLY=1; shift ;;
    -h|--help) sed -n 2,14p "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
case $TLS_NAME in
  shm) UCX_TLS_LIST=posix,sysv,cma,self ;;
  tcp) UCX_TLS_LIST=tcp,self ;;
  *) UCX_TLS_LIST=$TLS_NAME ;;
esac
BENCH=$BUILD/transfer_bench
[[ -x $BENCH ]] || { echo "no $BENCH (build target transfer_bench)" >&2; exit 2; }
command -v ucx_perftest >/dev/null || { echo "ucx_perftest not found (ucx-utils)" >&2; exit 2; }
PY=/usr/bin/python3
WORK=$(mktemp -d /tmp/xfer_vs_perftest.XXXXXX)
SERVER_PID=""
cleanup() {
  [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

bytes_of() { numfmt --from=iec-i "${1%B}"; }  # 64KiB -> 65536
free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print 0; else print a[int((NR+1)/2)]}'; }

# One ucx_perftest pair; prints GB/s (its "MB/s" is MiB/s) or 0 when it failed.
perftest_once() {
  local test=$1 size=$2 port n w
  port=$(free_port)
  # About 1 GiB moved per run on shm, 256 MiB on tcp (tcp RMA is slow), at least 20 iterations.
  local budget=$((1 << 30)); [[ $TLS_NAME == tcp ]] && budget=$((1 << 28))
  n=$((budget / size)); ((n < 20)) && n=20; ((n > 100000)) && n=100000
  w=$((n / 10 + 2))
  UCX_TLS=$UCX_TLS_LIST timeout 90 taskset -c 1 ucx_perftest -c 0 -t "$test" -s "$size" -n $n \
    -w $w -p "$port" >"$WORK/server.txt" 2>&1 &
  SERVER_PID=$!
  sleep 0.5
  local out
  out=$(UCX_TLS=$UCX_TLS_LIST timeout 90 taskset -c 0 ucx_perftest 127.0.0.1 -c 1 -t "$test" \
        -s "$size" -n $n -w $w -p "$port" 2>&1 | awk '/^Final:/ {print $7}') || true
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
  if [[ -z $out ]]; then echo 0; else awk -v m="$out" 'BEGIN {printf "%.4f\n", m * 1048576 / 1e9}'; fi
}

# transfer_bench once; prints "size op GB/s" lines and the path to $WORK/path.txt.
bench_once() {
  local sizes_csv=$1 extra=$2 csv=$WORK/bench.csv
  rm -f "$csv"
  timeout 300 mpirun --allow-run-as-root --bind-to core --map-by core -np 2 --mca btl self,vader,tcp \
    --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo -x UCX_WARN_UNUSED_ENV_VARS=n \
    "$BENCH" --tls "$UCX_TLS_LIST" --operation both --block-size "$sizes_csv" \
    --duration "$DURATION" --depth "$DEPTH" --csv "$csv" $extra $BENCH_ARGS >"$WORK/bench.txt" 2>&1 || {
      echo "transfer_bench failed:" >&2; tail -20 "$WORK/bench.txt" >&2; return 1; }
  grep -o 'path rank 0 -> 1: [^,]*\(,[^,]*\)*(.*)' "$WORK/bench.txt" | head -1 | sed 's/path rank 0 -> 1: //; s/), rma.*/)/' >"$WORK/path.txt" || true
  awk -F, 'NR > 1 {print $2, $3, $11}' "$csv"
}

echo "transfer_vs_ucx_perftest: tls=$TLS_NAME (UCX_TLS=$UCX_TLS_LIST), sizes: $SIZES, repeats $REPEATS, depth $DEPTH, cores 0 and 1"
declare -A BASE BEST_TEST OURS
# Each size's baselines and ours run back to back: the machine's load drifts over tens of
# seconds, and pairing them in time keeps that drift out of the ratio.
for ((rep = 0; rep < (LATENCY_ONLY ? 0 : REPEATS); rep++)); do
  for size in $SIZES; do
    b=$(bytes_of "$size")
    for test in ucp_put_bw ucp_get ucp_am_bw tag_bw; do
      echo "$(perftest_once $test "$b")" >>"$WORK/base_${size}_${test}"
    done
    bench_once "$size" "" | while read -r s op gbps; do echo "$gbps" >>"$WORK/ours_${size}_${op}"; done
  done
  bench_once "1MiB" "--buffer-size 1GiB" | while read -r size op gbps; do echo "$gbps" >>"$WORK/large_${op}"; done
done
if ((LATENCY_ONLY)); then SIZES=""; fi
PATH_USED=$(cat "$WORK/path.txt" 2>/dev/null || echo unknown)
echo "transfer_bench path: $PATH_USED"
printf "%-8s %-6s %10s %10s %-12s %7s\n" size op ours_GB/s base_GB/s base_test ratio
min_ratio=""
for size in $SIZES; do
  best=0; best_test=none
  for test in ucp_put_bw ucp_get ucp_am_bw tag_bw; do
    v=$(median <"$WORK/base_${size}_${test}")
    if awk -v a="$v" -v b="$best" 'BEGIN {exit !(a > b)}'; then best=$v; best_test=$test; fi
  done
  for op in read write; do
    ours=$(median <"$WORK/ours_${size}_${op}" 2>/dev/null || echo 0)
    ratio=$(awk -v a="$ours" -v b="$best" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}')
    printf "%-8s %-6s %10.3f %10.3f %-12s %7s\n" "$size" "$op" "$ours" "$best" "$best_test" "$ratio"
    if [[ -z $min_ratio ]] || awk -v a="$ratio" -v b="$min_ratio" 'BEGIN {exit !(a < b)}'; then
      min_ratio=$ratio
    fi
  done
done
if ((!LATENCY_ONLY)); then
  for op in read write; do
    printf "%-8s %-6s %10.3f %10s %-12s %7s   (large footprint: 1 GiB buffers, not in the ratio)\n" \
      1MiB "$op" "$(median <"$WORK/large_${op}" 2>/dev/null || echo 0)" - - -
  done
fi
# Latency with one request in flight: a 4 KiB read against ucx_perftest's ucp_get (-O 1), both
# timed per iteration with the cycle counter, paired in time, REPEATS rounds; medians of the p50s.
LAT_ROUNDS=$((REPEATS < 3 ? 3 : REPEATS))
# ucp_get has no tcp baseline worth comparing (UCX 1.13 emulates RMA there): shm only.
[[ $TLS_NAME == shm ]] || LAT_ROUNDS=0
for ((rep = 0; rep < LAT_ROUNDS; rep++)); do
  port=$(free_port)
  UCX_TLS=$UCX_TLS_LIST timeout 60 taskset -c 1 ucx_perftest -c 0 -t ucp_get -s 4096 -n 200000 -O 1 \
    -p "$port" >"$WORK/lat_server.txt" 2>&1 &
  SERVER_PID=$!
  sleep 0.5
  UCX_TLS=$UCX_TLS_LIST timeout 60 taskset -c 0 ucx_perftest 127.0.0.1 -c 1 -t ucp_get -s 4096 \
    -n 200000 -O 1 -p "$port" 2>&1 | awk '/^Final:/ {print $3}' >>"$WORK/lat_base" || true
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
  rm -f "$WORK/lat.csv"
  timeout 120 mpirun --allow-run-as-root --bind-to core --map-by core -np 2 --mca btl self,vader,tcp \
    --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo -x UCX_WARN_UNUSED_ENV_VARS=n \
    "$BENCH" --tls "$UCX_TLS_LIST" --operation read --block-size 4KiB --batch-size 1 \
    --duration 1s --csv "$WORK/lat.csv" $BENCH_ARGS >"$WORK/lat_bench.txt" 2>&1 &&
    awk -F, 'NR > 1 {print $13}' "$WORK/lat.csv" >>"$WORK/lat_ours" || true
done
touch "$WORK/lat_base" "$WORK/lat_ours"  # empty when no round ran (tcp)
lat_base=$(median <"$WORK/lat_base")
lat_ours=$(median <"$WORK/lat_ours")
lat_ratio=$(awk -v a="$lat_ours" -v b="$lat_base" 'BEGIN {if (b > 0) printf "%.2f", a / b; else printf "n/a"}')
((LAT_ROUNDS == 0)) || echo "4KiB read, one in flight: p50 ours $lat_ours us (rounds: $(tr '\n' ' ' <"$WORK/lat_ours")), ucp_get p50 $lat_base us (rounds: $(tr '\n' ' ' <"$WORK/lat_base")), ratio $lat_ratio"
((LATENCY_ONLY)) && min_ratio=n/a
echo "transfer_vs_ucx_perftest min_ratio=${min_ratio:-0} tls=$TLS_NAME latency_ratio=$lat_ratio"
