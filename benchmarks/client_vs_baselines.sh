#!/usr/bin/env bash
# benchmarks/client_vs_baselines.sh [--build DIR] [--repeats N] [--min-time SECONDS]
#                                   [--store-dram SIZE]   (defaults: build, 3, 1, 2GiB)
#
# The store's client for processes outside the job (docs/CLIENT.md), in one run on this machine:
# a store job (`mooncake --job.mode store`: a master and 2 store ranks of 2 GiB (--store-dram),
# shared memory) and, against it, one C++ process (build/client_bench: libmooncake_client) and one Python
# process (benchmarks/client_bench.py: the mooncake_store module's batch_put_from /
# batch_get_into into registered numpy arrays); beside them, redis-py (with hiredis's parser,
# over a unix socket, 1 MiB reads; the script prints which parser it got) against a redis-server
# started here on 127.0.0.1 (a free port, stopped by PID; one pipeline of 32 SETs or GETs per
# call, keys over about 1 GiB), and the in-job client (build/store_bench: a rank of a job, one
# store rank of 2 GiB). Values of 4 KiB, 64 KiB, 1 MiB and 16 MiB in batches of 32 keys; each
# put and get runs for --min-time per size, REPEATS rounds with every side in each round;
# medians are compared.
# Last line: client_vs_baselines py_vs_cpp=<lowest Python/C++ get ratio at 1 and 16 MiB>
#            py_vs_redis=<lowest Python/redis-py get ratio at 64 KiB, 1 and 16 MiB>
# (targets: py_vs_cpp >= 0.8, py_vs_redis >= 3).
set -euo pipefail
# --help prints the comment block above.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi
BUILD=build
REPEATS=3
MIN_TIME=1
STORE_DRAM=2GiB
while (($# > 0)); do
  case $1 in
    --build) BUILD=${2:?--build needs a folder}; shift 2 ;;
    --repeats) REPEATS=${2:?--repeats needs a number}; shift 2 ;;
    --min-time) MIN_TIME=${2:?--min-time needs seconds}; shift 2 ;;
    --store-dram) STORE_DRAM=${2:?--store-dram needs a size}; shift 2 ;;
    *) echo "client_vs_baselines.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
PY=/usr/bin/python3
for f in "$BUILD/mooncake" "$BUILD/client_bench" "$BUILD/store_bench"; do
  [[ -x $f ]] || { echo "client_vs_baselines.sh: $f is missing (build first)" >&2; exit 2; }
done
ls "$BUILD"/python/mooncake_store*.so >/dev/null 2>&1 ||
  { echo "client_vs_baselines.sh: no $BUILD/python/mooncake_store module (python3-dev, pybind11-dev)" >&2; exit 2; }
# Whatever ends the script (an error, Ctrl-C, SIGTERM), the store job's ranks and redis-server
# are stopped by PID before $OUT, which holds the job's connect.json, is removed (lib-job.sh).
# shellcheck source=launch/lib-job.sh
source "$(dirname "$0")/../launch/lib-job.sh"
OUT=$(mktemp -d "${TMPDIR:-/tmp}/client_vs_baselines.XXXXXX")
cleanup() { rm -rf "$OUT"; }
job_traps cleanup
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader,tcp
        --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo -x UCX_WARN_UNUSED_ENV_VARS=n)
SIZES=4096,65536,1048576,16777216

PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
job_start redis-server --port "$PORT" --bind 127.0.0.1 --unixsocket "$OUT/redis.sock" \
  --unixsocketperm 700 --save "" --appendonly no --daemonize no --dir "$OUT" \
  > "$OUT/redis-server.log" 2>&1
job_start "${MPIRUN[@]}" -np 3 "$BUILD/mooncake" --job.mode store --store.dram "$STORE_DRAM" \
  --out "$OUT/store-job" > "$OUT/store-job.log" 2>&1
STORE_JOB=$JOB_PID
CONNECT=$OUT/store-job/connect.json
for _ in $(seq 1 600); do
  [[ -f $CONNECT ]] && redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
  kill -0 "$STORE_JOB" 2>/dev/null || { cat "$OUT/store-job.log"; exit 1; }
  sleep 0.1
done
[[ -f $CONNECT ]] || { echo "the store job did not start:"; cat "$OUT/store-job.log"; exit 1; }
redis-cli -p "$PORT" ping >/dev/null || { echo "redis-server did not start:"; cat "$OUT/redis-server.log"; exit 1; }

echo "== store job: ${MPIRUN[*]} -np 3 $BUILD/mooncake --job.mode store --store.dram $STORE_DRAM"
echo "   C++: $BUILD/client_bench CONNECT --min-time ${MIN_TIME}s"
echo "   Python: $PY benchmarks/client_bench.py --connect CONNECT --min-time $MIN_TIME"
echo "   redis-py: $PY benchmarks/client_bench.py --redis-port PORT --redis-socket SOCK --min-time $MIN_TIME"
echo "   in-job: ${MPIRUN[*]} -np 3 $BUILD/store_bench --stores 1 --store-dram 2GiB --ops put,get --batches 32"
echo "   values 4 KiB .. 16 MiB, batches of 32 keys, $REPEATS rounds"
for i in $(seq 1 "$REPEATS"); do
  "$BUILD/client_bench" "$CONNECT" --sizes "$SIZES" --batch 32 --min-time "${MIN_TIME}s" \
    --tag "cpp$i" --csv "$OUT/cpp_$i.csv" > "$OUT/cpp_$i.log" 2>&1 || { cat "$OUT/cpp_$i.log"; exit 1; }
  PYTHONPATH=$BUILD/python $PY benchmarks/client_bench.py --connect "$CONNECT" --sizes "$SIZES" \
    --batch 32 --min-time "$MIN_TIME" --tag "py$i" --csv "$OUT/py_$i.csv" > "$OUT/py_$i.log" 2>&1 ||
    { cat "$OUT/py_$i.log"; exit 1; }
  $PY benchmarks/client_bench.py --redis-port "$PORT" --redis-socket "$OUT/redis.sock" \
    --sizes "$SIZES" --batch 32 \
    --min-time "$MIN_TIME" --csv "$OUT/redis_$i.csv" > "$OUT/redis_$i.log" 2>&1 ||
    { cat "$OUT/redis_$i.log"; exit 1; }
  job_run "${MPIRUN[@]}" -np 3 "$BUILD/store_bench" --stores 1 --store-dram 2GiB \
    --client-buffer 1GiB --sizes 4KiB,64KiB,1MiB,16MiB --batches 32 --min-time "${MIN_TIME}s" --ops put,get \
    --csv "$OUT/injob_$i.csv" > "$OUT/injob_$i.log" 2>&1 || { cat "$OUT/injob_$i.log"; exit 1; }
  echo "   round $i of $REPEATS done"
done
echo "   $(head -1 "$OUT/redis_1.log")"
"$BUILD/mooncake" store stop "$CONNECT" > /dev/null || echo "warning: the store job did not stop in order"
job_stop "$STORE_JOB"

$PY - "$OUT" "$REPEATS" <<'PYEOF'
import csv, statistics, sys
out, repeats = sys.argv[1], int(sys.argv[2])
runs = {}  # (side, op, size) -> [GB/s per round]
for i in range(1, repeats + 1):
    for side in ("cpp", "py", "redis", "injob"):
        for row in csv.DictReader(open(f"{out}/{side}_{i}.csv")):
            if int(row["errors"]) != 0:
                sys.exit(f"{side} round {i}: {row['op']} {row['size']} B had {row['errors']} errors")
            if side == "injob" and int(row.get("batch", 32)) != 32:
                continue
            runs.setdefault((side, row["op"], int(row["size"])), []).append(float(row["gb_per_s"]))
med = {k: statistics.median(v) for k, v in runs.items()}
names = {"py": "Python", "cpp": "C++", "redis": "redis-py", "injob": "in-job"}
print(f"{'size':>7} {'op':<4} " + " ".join(f"{names[s]:>9}" for s in names) +
      "   Python/C++  Python/redis-py  (median GB/s)")
for size in (4096, 65536, 1 << 20, 16 << 20):
    for op in ("put", "get"):
        v = {s: med.get((s, op, size), float("nan")) for s in names}
        label = f"{size >> 10} KiB" if size < (1 << 20) else f"{size >> 20} MiB"
        print(f"{label:>7} {op:<4} " + " ".join(f"{v[s]:>9.3f}" for s in names) +
              f"   {v['py'] / v['cpp']:>10.2f}  {v['py'] / v['redis']:>15.2f}")
py_vs_cpp = min(med[("py", "get", s)] / med[("cpp", "get", s)] for s in (1 << 20, 16 << 20))
py_vs_redis = min(med[("py", "get", s)] / med[("redis", "get", s)]
                  for s in (65536, 1 << 20, 16 << 20))
print(f"client_vs_baselines py_vs_cpp={py_vs_cpp:.2f} py_vs_redis={py_vs_redis:.2f}")
PYEOF
