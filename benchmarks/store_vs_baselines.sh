#!/usr/bin/env bash
# benchmarks/store_vs_baselines.sh [BUILD_DIR] [TLS] [REPEATS]   (defaults: build, shm, 3)
#
# In one run on this machine: store_bench put and get at 1, 4 and 16 MiB (batches of 32 keys, one
# client, one store rank of 1 GiB, objects spread over 80 % of it), the raw one-sided read of the
# same sizes and footprint (store_bench --ops raw: the same Transport calls without the store),
# and redis-benchmark SET/GET with the same value sizes against a redis-server started here on
# 127.0.0.1 (a free port; stopped by PID), Redis at its best of 1 and 4 clients, keys spread over
# about 800 MiB. Both are run REPEATS rounds (default 3), Redis right after the store in each
# round; medians are used (Redis: per client count, then the best count).
# The store's puts and gets also run with --copy-threads 2 (each call's copy and hash on two
# threads); against Redis the store counts at its best of 1 and 2 copy threads, as Redis at its
# best of 1 and 4 clients; get/raw stays one thread against one thread.
# SSD-only gets (SSD=0 skips them): in each round store_bench with an HDF5 SSD tier on the store
# rank (--ssd-dir under /tmp, a 512 MiB store): each case's objects are evicted to SSD, then
# got by the client (the store rank stages them, the client reads them one-sided: "ssd") and
# read by the store rank from its own tier ("ssd_local", Hdf5Tier::Read), at 64 KiB, 1 MiB and
# 16 MiB, batches of 32; once from the page cache and once cold (--ssd-cold: the tier files'
# pages dropped before each pass, one pass each). Both sides read with the same number of
# threads: the stager's 4 readers against 4 local threads (SSD_LOCAL_THREADS=n sets the local
# side alone, e.g. 1 for the figures before 2026-11-26).
# Small objects (SMALL=0 skips them): in each round store_bench put and get of 4 KiB and 64 KiB
# objects, batches of 32, one client (4096 objects of each size, verified gets), and
# redis-benchmark SET/GET with pipelining (-P 32) of the same values over as many keys (-r 4096),
# 1 and 4 clients (best kept); keys/s against requests/s. Then store_bench --ops meta: PutStart
# + PutEnd + Get of fresh keys, batches of 128, through the master's RPC from one client, and
# the same rounds inside the master on one thread of rank 0 (metadata operations/s, three per
# key; --lease 20ms so that a full store can evict what the benchmark no longer reads).
# Last line: store_vs_baselines get_vs_raw=<r> get_vs_redis=<r> put_vs_redis=<r>
#   [ssd_vs_local=<r> ssd_vs_local_cold=<r>] [get4k_vs_redis=<r> put4k_vs_redis=<r>
#   get64k_vs_redis=<r> put64k_vs_redis=<r> meta_ops_per_s=<n> meta_ops_per_cpu_s=<n>
#   meta_rpc_ops_per_s=<n>]
# (get_vs_raw is the lowest of the 1, 4 and 16 MiB ratios; the Redis ratios are at 1 MiB; the
# SSD ratios are remote / local GB/s, the lowest over the three sizes, medians over rounds; the
# small-object ratios are store keys/s / Redis pipelined requests/s, medians over rounds;
# meta_ops_per_s is inside the master on one thread per wall-clock second, meta_ops_per_cpu_s
# per second of that thread's CPU time (what one core does when the machine is shared),
# meta_rpc_ops_per_s through the RPC from one client).
# Mooncake Store's published 1 and 4 MiB put/get figures are quoted beside ours, never divided:
# they were measured on another machine, so a ratio would compare the machines as much as the
# stores (vs_mooncake_te.sh measures Mooncake's transfer engine in the same run instead).
set -euo pipefail
# --help prints the comment block above.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi
BUILD=${1:-build}
TLS=${2:-shm}
REPEATS=${3:-3}
PY=/usr/bin/python3
# Whatever ends the script (an error, Ctrl-C, SIGTERM), redis-server and the running
# store_bench job (its ranks included) are stopped by PID before $OUT goes (launch/lib-job.sh);
# each job runs through job_run, so that an interrupt stops it at once.
# shellcheck source=launch/lib-job.sh
source "$(dirname "$0")/../launch/lib-job.sh"
OUT=$(mktemp -d /tmp/store_vs_baselines.XXXXXX)
cleanup() { rm -rf "$OUT"; }
job_traps cleanup

# Placement (PLACEMENT env): "core" binds the master and the store rank (both mostly idle: on
# shared memory the client copies the bytes itself) to core 0 and the client to core 1; "none"
# (default) lets the kernel place the threads: each rank has a caller, a UCX progress thread and
# an RPC dispatcher, and pinning all of a rank's threads to one busy core costs ms per wake-up.
HOST=$(hostname)
printf 'rank 0=%s slot=0\nrank 1=%s slot=0\nrank 2=%s slot=1\n' "$HOST" "$HOST" "$HOST" > "$OUT/rankfile"
case "${PLACEMENT:-none}" in
  core) PLACE=(--rankfile "$OUT/rankfile") ;;
  none) PLACE=(--bind-to none) ;;
  *) echo "PLACEMENT must be core or none" >&2; exit 2 ;;
esac
MPIRUN=(mpirun --allow-run-as-root --oversubscribe "${PLACE[@]}"
        --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo
        -x UCX_WARN_UNUSED_ENV_VARS=n)
# Redis runs inside each repeat, right after the store's runs, so that load drifting on a shared
# machine reaches both sides alike; its medians are taken per client count as the store's are.
PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
job_start redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no \
  --daemonize no --dir "$OUT" > "$OUT/redis-server.log" 2>&1
REDIS_PID=$JOB_PID
for _ in $(seq 1 50); do redis-cli -p "$PORT" ping > /dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$PORT" ping > /dev/null || { echo "redis-server did not start:"; cat "$OUT/redis-server.log"; exit 1; }
: > "$OUT/redis.csv"
run_redis() {  # one round of redis-benchmark SET/GET, 1 and 4 clients, 1 MiB and 16 MiB
  local size keys n c t rps
  for size in 1048576 16777216; do
    keys=$((838860800 / size))  # ~800 MiB of distinct values, as the store's footprint
    n=$((size == 1048576 ? 3000 : 300))
    for c in 1 4; do
      for t in set get; do
        rps=$(redis-benchmark -p "$PORT" -t "$t" -n "$n" -d "$size" -r "$keys" -c "$c" --csv 2>/dev/null |
              awk -F'"' 'NR > 1 && $2 != "" {print $4; exit}')
        echo "$1,$t,$size,$c,$rps" >> "$OUT/redis.csv"
      done
    done
  done
}
: > "$OUT/redis_small.csv"
run_redis_small() {  # one round of pipelined redis-benchmark SET/GET, 1 and 4 clients, 4/64 KiB
  local size n c t rps
  for size in 4096 65536; do
    n=$((size == 4096 ? 1000000 : 100000))
    for c in 1 4; do
      for t in set get; do
        rps=$(redis-benchmark -p "$PORT" -t "$t" -n "$n" -d "$size" -r 4096 -c "$c" -P 32 --csv \
              2>/dev/null | awk -F'"' 'NR > 1 && $2 != "" {print $4; exit}')
        echo "$1,$t,$size,$c,$rps" >> "$OUT/redis_small.csv"
      done
    done
  done
}
STORE_ARGS=(--stores 1 --store-dram 1GiB --client-buffer 1GiB --sizes 1MiB,4MiB,16MiB --batches 32
            --min-time 1s --tls "$TLS")
SSD_ARGS=(--stores 1 --store-dram 512MiB --client-buffer 1GiB --sizes 64KiB,1MiB,16MiB
          --batches 32 --min-time 1s --tls "$TLS" --ops put,ssd,ssd_local
          --ssd-dir "$OUT/ssd" --ssd-local-threads "${SSD_LOCAL_THREADS:-0}")
SMALL_ARGS=(--stores 1 --store-dram 1GiB --client-buffer 256MiB --sizes 4KiB,64KiB --batches 32
            --min-time 1s --tls "$TLS" --ops put,get)
META_ARGS=(--stores 1 --store-dram 1GiB --sizes 4KiB --batches 128 --min-time 1s --tls "$TLS"
           --ops meta --lease 20ms)
echo "== store_bench (3 ranks: master, 1 store of 1 GiB, 1 client; tls $TLS) and redis-benchmark"
echo "   (redis-server on 127.0.0.1, 1 and 4 clients), $REPEATS rounds"
echo "   ${MPIRUN[*]} -np 3 $BUILD/store_bench ${STORE_ARGS[*]} --ops put,get,raw"
[[ ${SSD:-1} == 1 ]] && echo "   SSD-only gets: ... $BUILD/store_bench ${SSD_ARGS[*]} [--ssd-cold]"
if [[ ${SMALL:-1} == 1 ]]; then
  echo "   small objects: ... $BUILD/store_bench ${SMALL_ARGS[*]}; redis-benchmark -P 32 -r 4096"
  echo "   metadata: ... $BUILD/store_bench ${META_ARGS[*]}"
fi
for i in $(seq 1 "$REPEATS"); do
  job_run "${MPIRUN[@]}" -np 3 "$BUILD/store_bench" "${STORE_ARGS[@]}" --ops put,get,raw \
    --csv "$OUT/store_$i.csv" > "$OUT/store_$i.log" 2>&1 || { cat "$OUT/store_$i.log"; exit 1; }
  # The same gets without checksum verification (what Mooncake Store and Redis do).
  job_run "${MPIRUN[@]}" -np 3 "$BUILD/store_bench" "${STORE_ARGS[@]}" --ops get --verify false \
    --csv "$OUT/noverify_$i.csv" > "$OUT/noverify_$i.log" 2>&1 || { cat "$OUT/noverify_$i.log"; exit 1; }
  # Puts and gets with each call's copy and hash split over two threads (the client's two
  # cores; Redis is measured at its best of 1 and 4 clients).
  job_run "${MPIRUN[@]}" -np 3 "$BUILD/store_bench" "${STORE_ARGS[@]}" --ops put,get --copy-threads 2 \
    --csv "$OUT/ct2_$i.csv" > "$OUT/ct2_$i.log" 2>&1 || { cat "$OUT/ct2_$i.log"; exit 1; }
  run_redis "$i"
  if [[ ${SMALL:-1} == 1 ]]; then
    job_run "${MPIRUN[@]}" -np 3 "$BUILD/store_bench" "${SMALL_ARGS[@]}" --csv "$OUT/small_$i.csv" \
      > "$OUT/small_$i.log" 2>&1 || { cat "$OUT/small_$i.log"; exit 1; }
    run_redis_small "$i"
    job_run "${MPIRUN[@]}" -np 3 "$BUILD/store_bench" "${META_ARGS[@]}" --csv "$OUT/meta_$i.csv" \
      > "$OUT/meta_$i.log" 2>&1 || { cat "$OUT/meta_$i.log"; exit 1; }
  fi
  if [[ ${SSD:-1} == 1 ]]; then
    for temp in hot cold; do
      job_run "${MPIRUN[@]}" -np 3 "$BUILD/store_bench" "${SSD_ARGS[@]}" \
        $([[ $temp == cold ]] && echo --ssd-cold) --csv "$OUT/ssd_${temp}_$i.csv" \
        > "$OUT/ssd_${temp}_$i.log" 2>&1 || { cat "$OUT/ssd_${temp}_$i.log"; exit 1; }
    done
  fi
  echo "   round $i of $REPEATS done"
done
job_stop "$REDIS_PID"
echo "== batched exists, 128 keys per call (4 KiB objects)"
job_run "${MPIRUN[@]}" -np 3 "$BUILD/store_bench" --stores 1 --store-dram 1GiB --sizes 4KiB --batches 128 \
  --min-time 1s --tls "$TLS" --ops exists --csv "$OUT/exists.csv" > "$OUT/exists.log" 2>&1 ||
  { cat "$OUT/exists.log"; exit 1; }

$PY - "$OUT" "$REPEATS" "$TLS" "${SSD:-1}" "${SMALL:-1}" <<'PYEOF'
import csv, statistics, sys
out, repeats, tls, ssd = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
small = sys.argv[5] == "1"
runs = {}
for i in range(1, repeats + 1):
    for row in csv.DictReader(open(f"{out}/store_{i}.csv")):
        if int(row["errors"]) != 0:
            sys.exit(f"store_bench run {i}: {row['op']} {row['size']} had errors")
        runs.setdefault((row["op"], int(row["size"])), []).append(float(row["gb_per_s"]))
    for row in csv.DictReader(open(f"{out}/noverify_{i}.csv")):
        runs.setdefault(("get-noverify", int(row["size"])), []).append(float(row["gb_per_s"]))
    for row in csv.DictReader(open(f"{out}/ct2_{i}.csv")):
        if int(row["errors"]) != 0:
            sys.exit(f"store_bench run {i} (--copy-threads 2): {row['op']} {row['size']} had errors")
        runs.setdefault((row["op"] + "-2thr", int(row["size"])), []).append(float(row["gb_per_s"]))
for row in csv.DictReader(open(f"{out}/exists.csv")):
    print(f"exists x{row['batch']}: {float(row['keys_per_s']):,.0f} keys/s through the RPC "
          f"(p50 {row['p50_us']} us per call), {float(row['master_exists_keys_per_s']):,.0f} "
          f"keys/s inside the master")
redis_runs = {}
for line in open(f"{out}/redis.csv"):
    _, t, size, c, rps = line.strip().split(",")
    redis_runs.setdefault((t, int(size), int(c)), []).append(float(rps or 0) * int(size) / 1e9)
redis = {}  # (op, size) -> best over client counts of the median over rounds
for (t, size, c), v in redis_runs.items():
    redis[(t, size)] = max(redis.get((t, size), 0.0), statistics.median(v))
med = {k: statistics.median(v) for k, v in runs.items()}
print(f"{'size':>6} {'op':<10} {'median GB/s':>11}  runs")
for (op, size), v in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    print(f"{size >> 20:>4}Mi {op:<10} {med[(op, size)]:>11.3f}  {' '.join(f'{x:.3f}' for x in v)}")
for (t, size, c), v in sorted(redis_runs.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
    print(f"{size >> 20:>4}Mi redis-{t}-c{c} {statistics.median(v):>8.3f}  {' '.join(f'{x:.3f}' for x in v)}")
# get/raw compares like with like: one thread each. Against Redis (at its best of 1 and 4
# clients) the store is taken at its best of 1 and 2 copy threads.
def best(op, size):
    return max(med[(op, size)], med.get((op + "-2thr", size), 0.0))
ratios = {}
for size in (1 << 20, 4 << 20, 16 << 20):
    gr = med[("get", size)] / med[("raw", size)]
    ratios[size] = gr
    nv = med[("get-noverify", size)] / med[("raw", size)]
    line = f"{size >> 20:>4}Mi get/raw {gr:.2f} (unverified {nv:.2f})"
    if ("get", size) in redis:
        line += (f"  get/redis-get {best('get', size) / redis[('get', size)]:.2f}  "
                 f"put/redis-set {best('put', size) / redis[('set', size)]:.2f}  "
                 f"(store: best of 1 and 2 copy threads)")
    print(line)
# Mooncake Store's published figures (TCP transport, loopback, one client, another machine):
# quoted for reference only, no ratio (not measured here).
mooncake = {1 << 20: (1.04, 2.33), 4 << 20: (1.18, 2.77)}
for size, (mc_put, mc_get) in mooncake.items():
    if ("get", size) not in med:
        continue
    print(f"{size >> 20:>4}Mi here on {tls}: put {best('put', size):.2f}, get "
          f"{best('get', size):.2f} GB/s; Mooncake Store's published figures (another machine, "
          f"TCP, one client, not a same-run baseline): put {mc_put}, get {mc_get} GB/s")
ssd_line = ""
if ssd:  # SSD-only gets: remote (staged, one-sided) against the tier's own read
    ssd_runs = {}
    for i in range(1, repeats + 1):
        for temp in ("hot", "cold"):
            for row in csv.DictReader(open(f"{out}/ssd_{temp}_{i}.csv")):
                if int(row["errors"]) != 0:
                    sys.exit(f"store_bench SSD run {i} ({temp}): {row['op']} {row['size']} had errors")
                ssd_runs.setdefault((temp, row["op"], int(row["size"])), []).append(
                    float(row["gb_per_s"]))
    ssd_ratio = {}
    for temp in ("hot", "cold"):
        for size in sorted({k[2] for k in ssd_runs}):
            remote = statistics.median(ssd_runs[(temp, "ssd", size)])
            local = statistics.median(ssd_runs[(temp, "ssd_local", size)])
            ssd_ratio.setdefault(temp, []).append(remote / local)
            print(f"{size >> 10:>6}Ki SSD-only ({temp}): remote get {remote:.3f} GB/s, the tier's "
                  f"local read {local:.3f} GB/s, ratio {remote / local:.2f}  (remote runs "
                  f"{' '.join(f'{x:.3f}' for x in ssd_runs[(temp, 'ssd', size)])}; local "
                  f"{' '.join(f'{x:.3f}' for x in ssd_runs[(temp, 'ssd_local', size)])})")
    ssd_line = (f" ssd_vs_local={min(ssd_ratio['hot']):.2f}"
                f" ssd_vs_local_cold={min(ssd_ratio['cold']):.2f}")
small_line = ""
if small:  # small objects: keys/s against Redis' pipelined requests/s; metadata ops/s
    keys, meta, meta_cpu, meta_rpc = {}, [], [], []
    for i in range(1, repeats + 1):
        for row in csv.DictReader(open(f"{out}/small_{i}.csv")):
            if int(row["errors"]) != 0:
                sys.exit(f"store_bench small run {i}: {row['op']} {row['size']} had errors")
            keys.setdefault((row["op"], int(row["size"])), []).append(float(row["keys_per_s"]))
        for row in csv.DictReader(open(f"{out}/meta_{i}.csv")):
            if int(row["errors"]) != 0 or float(row["master_meta_ops_per_s"]) == 0:
                sys.exit(f"store_bench meta run {i} had errors")
            meta.append(float(row["master_meta_ops_per_s"]))
            meta_cpu.append(float(row["master_meta_ops_per_cpu_s"]))
            meta_rpc.append(3 * float(row["keys_per_s"]))
    rs = {}
    for line in open(f"{out}/redis_small.csv"):
        _, t, size, c, rps = line.strip().split(",")
        rs.setdefault((t, int(size), int(c)), []).append(float(rps or 0))
    rbest = {}
    for (t, size, c), v in rs.items():
        rbest[(t, size)] = max(rbest.get((t, size), 0.0), statistics.median(v))
    for (t, size, c), v in sorted(rs.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        print(f"{size >> 10:>4}Ki redis-{t}-P32-c{c} {statistics.median(v):>12,.0f} req/s  "
              f"{' '.join(f'{x:,.0f}' for x in v)}")
    for size in (4096, 65536):
        for op, t in (("get", "get"), ("put", "set")):
            m = statistics.median(keys[(op, size)])
            ratio = m / rbest[(t, size)]
            print(f"{size >> 10:>4}Ki store {op} x32 {m:>12,.0f} keys/s ({' '.join(f'{x:,.0f}' for x in keys[(op, size)])})"
                  f"  vs redis {t.upper()} -P 32 {rbest[(t, size)]:,.0f}/s: {ratio:.2f}x")
            small_line += f" {op}{size >> 10}k_vs_redis={ratio:.2f}"
    print(f"metadata ops (PutStart + PutEnd + Get, batches of 128): inside the master on one "
          f"thread {statistics.median(meta):,.0f}/s of wall-clock time (runs "
          f"{' '.join(f'{x:,.0f}' for x in meta)}), {statistics.median(meta_cpu):,.0f}/s of its "
          f"CPU time (runs {' '.join(f'{x:,.0f}' for x in meta_cpu)}); "
          f"through the RPC from one client {statistics.median(meta_rpc):,.0f}/s "
          f"(runs {' '.join(f'{x:,.0f}' for x in meta_rpc)})")
    small_line += (f" meta_ops_per_s={statistics.median(meta):.0f}"
                   f" meta_ops_per_cpu_s={statistics.median(meta_cpu):.0f}"
                   f" meta_rpc_ops_per_s={statistics.median(meta_rpc):.0f}")
mi = 1 << 20
print(f"store_vs_baselines get_vs_raw={min(ratios.values()):.2f} "
      f"get_vs_redis={best('get', mi) / redis[('get', mi)]:.2f} "
      f"put_vs_redis={best('put', mi) / redis[('set', mi)]:.2f}{ssd_line}{small_line}")
PYEOF
