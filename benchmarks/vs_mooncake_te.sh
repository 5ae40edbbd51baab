#!/usr/bin/env bash
# Mooncake's own Transfer Engine beside ours, in one run, over TCP on this machine.
#
#   benchmarks/vs_mooncake_te.sh [MOONCAKE_SRC] [--build DIR] [--scratch DIR] [--jobs N]
#       [--sizes "64KiB 1MiB 4MiB"] [--batch 128] [--threads 1] [--duration 5] [--repeats 3]
#       [--bind native|none|core] [--mooncake-env "VAR=VALUE ..."] [--csv FILE] [--no-install]
#
# MOONCAKE_SRC is a checkout of kvcache-ai/Mooncake with its submodules (extern/yalantinglibs,
# extern/pybind11: `git clone --recursive`, or `git submodule update --init` in it). Without it
# the script says how to use it and exits 0 (nothing is built or measured: the CI-safe default).
#
# With it, the script
#  1. installs the Debian 12 packages the build needs where they are missing, saying which
#     (glog, gflags, jsoncpp, yaml-cpp, numa, ibverbs headers, python3-dev; --no-install only
#     names them and stops);
#  2. installs the checkout's yalantinglibs (headers, not in Debian) into SCRATCH/prefix and
#     builds Mooncake's `transfer_engine_bench` in SCRATCH/te-build (default scratch
#     /tmp/vs_mooncake_te; Release, TCP only: no etcd, no HTTP or Redis metadata, no CUDA, no
#     store, no tests; about 6 CPU-minutes). A second run reuses both, rebuilding what changed;
#  3. runs it (a target and an initiator process, `--protocol=tcp`,
#     `--metadata_server=P2PHANDSHAKE`: no metadata server at all) and build/transfer_bench
#     (two ranks under mpirun, UCX_TLS tcp,self) with the same block size, batch size, threads,
#     one batch in flight per thread, and the same touched memory (block x batch x threads on
#     each side, which is all Mooncake's bench reads or writes), read and write, per size and
#     repeat back to back (the order alternates between repeats). Mooncake runs twice: as built
#     ("default": its TCP transport opens a connection per request) and with its documented
#     MC_TCP_ENABLE_CONNECTION_POOL=1 ("pool": a few connections per peer, reused);
#  4. prints GB/s (1e9 B/s), medians over the repeats, and ours / the better Mooncake
#     configuration; last line "vs_mooncake_te read_ratio=<r> write_ratio=<r> ..." with the
#     lowest ratio over the sizes.
#
# Placement. --bind native (default): each engine as its own launcher places it: ours under
# mpirun's default for two ranks, one core each (initiator core 0, target core 1); Mooncake's
# processes unpinned, its bench binding its threads to their NUMA node's cores, here both.
# --bind core: both engines' initiators on core 0 and targets on core 1 (taskset for Mooncake).
# --bind none: no engine pinned (mpirun --bind-to none). Mooncake's initiator threads spin on
# getTransferStatus while its TCP transport's one asio thread moves the bytes: on one core
# they take turns, so Mooncake is slower pinned; ours is slower unpinned (docs/TRANSFER.md).
# --mooncake-env adds environment variables to every Mooncake process (e.g. MC_TCP_SLICE_SIZE).
# --csv FILE writes every single measurement (repeat,size,op,engine,GB/s).
# Exit status: 0 measured (or no checkout given), 1 a build or a run failed, 2 usage errors and
# missing inputs (not a Mooncake checkout, submodules missing, build/transfer_bench missing).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build
SCRATCH=/tmp/vs_mooncake_te
JOBS=2
SIZES="64KiB 1MiB 4MiB"
BATCH=128
THREADS=1
DURATION=5
REPEATS=3
BIND=native
CSV=""
MOONCAKE_ENV=""
INSTALL=1
SRC=""
usage() { sed -n 2,42p "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "vs_mooncake_te: $2" >&2; exit "$1"; }
need_value() { [[ $# -ge 2 && -n $2 ]] || die 2 "option $1 needs a value (see --help)"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --build|--scratch|--jobs|--sizes|--batch|--threads|--duration|--repeats|--bind|--csv|--mooncake-env)
      need_value "$@"
      case $1 in
        --build) BUILD=$2 ;; --scratch) SCRATCH=$2 ;; --jobs) JOBS=$2 ;; --sizes) SIZES=$2 ;;
        --batch) BATCH=$2 ;; --threads) THREADS=$2 ;; --duration) DURATION=$2 ;;
        --repeats) REPEATS=$2 ;; --bind) BIND=$2 ;; --csv) CSV=$2 ;; --mooncake-env) MOONCAKE_ENV=$2 ;;
      esac
      shift 2 ;;
    --no-install) INSTALL=0; shift ;;
    -*) die 2 "unknown option $1 (see --help)" ;;
    *) [[ -z $SRC ]] || die 2 "more than one MOONCAKE_SRC given ($SRC, $1)"; SRC=$1; shift ;;
  esac
done
for v in JOBS BATCH THREADS DURATION REPEATS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die 2 "--${v,,} must be a positive integer, got '${!v}'"
done
[[ $BIND =~ ^(native|none|core)$ ]] || die 2 "--bind must be native, none or core, got '$BIND'"
for word in $MOONCAKE_ENV; do
  [[ $word =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die 2 "--mooncake-env: '$word' is not VAR=VALUE"
done

if [[ -z $SRC ]]; then
  echo "vs_mooncake_te: no Mooncake checkout given, nothing built or measured."
  echo "Usage: benchmarks/vs_mooncake_te.sh MOONCAKE_SRC [options]   (--help for the options)"
  echo "  e.g. git clone --recursive https://github.com/kvcache-ai/Mooncake /tmp/Mooncake"
  echo "       benchmarks/vs_mooncake_te.sh /tmp/Mooncake"
  exit 0
fi

# ---- inputs ----------------------------------------------------------------------------------
SRC=$(cd "$SRC" 2>/dev/null && pwd) || die 2 "MOONCAKE_SRC '$SRC' is not a folder"
TE_BENCH_SOURCE=$SRC/mooncake-transfer-engine/example/transfer_engine_bench.cpp
[[ -f $TE_BENCH_SOURCE && -f $SRC/mooncake-common/common.cmake ]] ||
  die 2 "$SRC is not a Mooncake checkout (no mooncake-transfer-engine/example/transfer_engine_bench.cpp)"
for sub in yalantinglibs pybind11; do
  [[ -f $SRC/extern/$sub/CMakeLists.txt ]] || die 2 "$SRC/extern/$sub is empty: Mooncake's \
build needs its submodules (yalantinglibs is in no Debian package; pybind11 is added as a \
subdirectory). Run: git -C $SRC submodule update --init extern/yalantinglibs extern/pybind11"
done
OURS=$BUILD/transfer_bench
[[ -x $OURS ]] || die 2 "no $OURS: build ours first (cmake --build build --target transfer_bench)"
for tool in mpirun taskset numfmt timeout; do
  command -v $tool >/dev/null || die 2 "$tool not found"
done
for s in $SIZES; do
  numfmt --from=iec-i "${s%B}" >/dev/null 2>&1 || die 2 "--sizes: '$s' is not a size like 64KiB"
done

# ---- Debian packages -------------------------------------------------------------------------
# What Mooncake's transfer engine needs from Debian for this build (dependencies.sh installs
# more: grpc, protobuf, hiredis, uring, zmq, zstd, xxhash, jemalloc, msgpack, curl, serve the
# store and the etcd/Redis/HTTP metadata back-ends, all switched off here).
PACKAGES=(cmake make g++ pkg-config python3-dev libgoogle-glog-dev libgflags-dev libjsoncpp-dev
  libyaml-cpp-dev libnuma-dev libibverbs-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  if ((INSTALL == 0)) || [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
    die 2 "Mooncake's build needs these Debian packages, not installed: ${missing[*]} \
(apt-get install -y --no-install-recommends ${missing[*]})"
  fi
  echo "vs_mooncake_te: installing Debian packages Mooncake's build needs: ${missing[*]}"
  apt_log=$(mktemp /tmp/vs_mooncake_te_apt.XXXXXX)
  { apt-get install -y --no-install-recommends "${missing[@]}" ||
    { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; }; } >"$apt_log" 2>&1 ||
    { tail -10 "$apt_log" >&2; die 1 "apt-get install ${missing[*]} failed (log: $apt_log)"; }
  rm -f "$apt_log"
fi

# ---- build -----------------------------------------------------------------------------------
mkdir -p "$SCRATCH" || die 2 "cannot create --scratch $SCRATCH"
# A scratch folder built from another checkout is started afresh (CMake refuses a cache made
# for another source tree).
if [[ -f $SCRATCH/source.txt && $(cat "$SCRATCH/source.txt") != "$SRC" ]]; then
  echo "vs_mooncake_te: $SCRATCH was built from $(cat "$SCRATCH/source.txt"); starting afresh"
  rm -rf "$SCRATCH/ylt-build" "$SCRATCH/prefix" "$SCRATCH/te-build"
fi
echo "$SRC" >"$SCRATCH/source.txt"
step() {  # step NAME COMMAND...: runs it into SCRATCH/NAME.log; on failure shows the log's tail
  local name=$1; shift
  if ! "$@" >"$SCRATCH/$name.log" 2>&1; then
    tail -25 "$SCRATCH/$name.log" >&2
    die 1 "Mooncake build step '$name' failed; full log: $SCRATCH/$name.log"
  fi
}
if [[ ! -f $SCRATCH/prefix/lib/cmake/yalantinglibs/yalantinglibsConfig.cmake ]]; then
  echo "vs_mooncake_te: installing $SRC/extern/yalantinglibs into $SCRATCH/prefix"
  step ylt-configure cmake -S "$SRC/extern/yalantinglibs" -B "$SCRATCH/ylt-build" \
    -DCMAKE_INSTALL_PREFIX="$SCRATCH/prefix" -DBUILD_EXAMPLES=OFF -DBUILD_BENCHMARK=OFF \
    -DBUILD_UNIT_TESTS=OFF
  step ylt-install cmake --install "$SCRATCH/ylt-build"
fi
# Mooncake's options for a TCP-only engine whose peers find each other by P2P handshake.
TE_OPTIONS=(-DCMAKE_BUILD_TYPE=Release -DENABLE_DEBUG_SYMBOLS=OFF
  -DCMAKE_PREFIX_PATH="$SCRATCH/prefix" -DPython3_EXECUTABLE=/usr/bin/python3
  -DWITH_TE=ON -DUSE_TCP=ON -DUSE_TENT=OFF -DUSE_ETCD=OFF -DUSE_HTTP=OFF -DUSE_REDIS=OFF
  -DUSE_CUDA=OFF -DWITH_STORE=OFF -DWITH_STORE_RUST=OFF -DWITH_P2P_STORE=OFF -DWITH_EP=OFF
  -DBUILD_UNIT_TESTS=OFF -DBUILD_BENCHMARK=OFF -DBUILD_EXAMPLES=ON)
if [[ ! -f $SCRATCH/te-build/CMakeCache.txt ]]; then
  echo "vs_mooncake_te: configuring Mooncake in $SCRATCH/te-build"
  step te-configure cmake -S "$SRC" -B "$SCRATCH/te-build" "${TE_OPTIONS[@]}"
fi
echo "vs_mooncake_te: building transfer_engine_bench in $SCRATCH/te-build (-j$JOBS)"
step te-build cmake --build "$SCRATCH/te-build" --target transfer_engine_bench -j "$JOBS"
TE=$SCRATCH/te-build/mooncake-transfer-engine/example/transfer_engine_bench
[[ -x $TE ]] || die 1 "the build succeeded but $TE is missing"

# ---- runs ------------------------------------------------------------------------------------
WORK=$(mktemp -d /tmp/vs_mooncake_te_run.XXXXXX)
TARGET_PID=""
cleanup() {
  stop_target
  rm -rf "$WORK"
}
trap cleanup EXIT
if [[ $BIND == core ]]; then
  ON_CORE0=(taskset -c 0); ON_CORE1=(taskset -c 1); MPI_BIND=(--bind-to core --map-by core)
elif [[ $BIND == native ]]; then
  ON_CORE0=(); ON_CORE1=(); MPI_BIND=(--bind-to core --map-by core)
else
  ON_CORE0=(); ON_CORE1=(); MPI_BIND=(--bind-to none)
fi
bytes_of() { numfmt --from=iec-i "${1%B}"; }
median() {  # of the numbers on stdin; the mean of the middle two for an even count
  sort -g | awk '{a[NR] = $1} END {if (NR == 0) print 0; else if (NR % 2) print a[(NR + 1) / 2];
    else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}
record() {  # record REP SIZE OP ENGINE GBPS
  echo "$5" >>"$WORK/$4_$2_$3"
  [[ -z $CSV ]] || echo "$1,$2,$3,$4,$5" >>"$CSV"
  printf '  repeat %d %-6s %-5s %-10s %8.3f GB/s\n' "$1" "$2" "$3" "$4" "$5"
}
te_flags() {  # sets TE_FLAGS: the flags both Mooncake processes share, for block size $1
  TE_FLAGS=(--metadata_server=P2PHANDSHAKE --protocol=tcp --block_size="$1" --batch_size="$BATCH"
    --threads="$THREADS" --buffer_size=$(($1 * BATCH * THREADS)))
}

# Mooncake: per size and configuration one target, then one initiator per operation against it.
# Configurations: "default" as built (its TCP transport opens a connection per request) and
# "pool" with MC_TCP_ENABLE_CONNECTION_POOL=1 (Mooncake's documented switch: requests reuse a
# few connections per peer). The better of the two is the baseline of the ratio.
stop_target() {
  if [[ -n $TARGET_PID ]]; then
    kill "$TARGET_PID" 2>/dev/null || true
    wait "$TARGET_PID" 2>/dev/null || true
  fi
  TARGET_PID=""
}
mooncake_logs() {  # the tails of both processes' logs, on stderr
  echo "--- Mooncake target log (tail) ---" >&2; tail -8 "$WORK/target.log" >&2 || true
  echo "--- Mooncake initiator log (tail) ---" >&2; tail -8 "$WORK/initiator.log" >&2 || true
}
# One attempt: a target, then an initiator per operation; sets RESULT ("read_GB/s write_GB/s")
# or FAILURE and returns 1.
mooncake_attempt() {  # mooncake_attempt SIZE_BYTES ENV...
  local b=$1 port="" op gbps
  shift
  te_flags "$b"
  : >"$WORK/initiator.log"
  # The child opens the log only once it runs: remove the last target's, or its port is read.
  rm -f "$WORK/target.log"
  "$@" "${ON_CORE1[@]}" timeout $((4 * DURATION + 120)) "$TE" --mode=target \
    --local_server_name=127.0.0.1:12345 "${TE_FLAGS[@]}" >"$WORK/target.log" 2>&1 &
  TARGET_PID=$!
  # The target is ready once it has registered its buffer (it then logs the NUMA line).
  for _ in $(seq 1 300); do
    port=$(sed -n 's/.*P2P handshake, listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' \
      "$WORK/target.log" 2>/dev/null)
    grep -qs "DRAM is used" "$WORK/target.log" && [[ -n $port ]] && break
    kill -0 "$TARGET_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z $port ]] || ! grep -qs "DRAM is used" "$WORK/target.log"; then
    FAILURE="the target did not come up within 30 s"; return 1
  fi
  sleep 1  # the NUMA line comes just before the buffer is allocated and published
  RESULT=""
  for op in read write; do
    if ! "$@" "${ON_CORE0[@]}" timeout $((DURATION + 60)) "$TE" --mode=initiator \
      --local_server_name=127.0.0.1:12346 --segment_id=127.0.0.1:"$port" --operation=$op \
      --duration="$DURATION" --report_unit=GB --report_precision=4 "${TE_FLAGS[@]}" \
      >"$WORK/initiator.log" 2>&1; then
      FAILURE="the $op initiator failed"; return 1
    fi
    kill -0 "$TARGET_PID" 2>/dev/null || { FAILURE="the target exited during the $op run"; return 1; }
    gbps=$(sed -n 's/.*Test completed: .* throughput \([0-9.]*\) GB\/s.*/\1/p' "$WORK/initiator.log")
    [[ -n $gbps ]] || { FAILURE="no throughput line from the $op initiator"; return 1; }
    RESULT+="$gbps "
  done
  stop_target
}
# Mooncake: per size and configuration one target, then one initiator per operation against it.
# Configurations: "default" as built (its TCP transport opens a connection per request) and
# "pool" with MC_TCP_ENABLE_CONNECTION_POOL=1 (Mooncake's documented switch: requests reuse a
# few connections per peer). The better of the two is the baseline of the ratio. A failed
# attempt is shown with both logs and retried once with a fresh target; a second failure ends
# the run.
mooncake_once() {  # mooncake_once REP SIZE CONFIG
  local rep=$1 size=$2 config=$3 env=(env GLOG_logtostderr=1) attempt rd wr
  [[ $config == pool ]] && env+=(MC_TCP_ENABLE_CONNECTION_POOL=1)
  # shellcheck disable=SC2206  # --mooncake-env is a list of VAR=VALUE words
  env+=($MOONCAKE_ENV)
  for attempt in 1 2; do
    if mooncake_attempt "$(bytes_of "$size")" "${env[@]}"; then
      read -r rd wr <<<"$RESULT"
      record "$rep" "$size" read "mc-$config" "$rd"
      record "$rep" "$size" write "mc-$config" "$wr"
      return 0
    fi
    stop_target
    mooncake_logs
    if ((attempt == 1)); then
      echo "vs_mooncake_te: Mooncake $size $config: $FAILURE; retrying once (logs above)" >&2
    fi
  done
  die 1 "Mooncake $size $config failed twice: $FAILURE (logs above)"
}
mooncake_both() { mooncake_once "$1" "$2" default; mooncake_once "$1" "$2" pool; }

# Ours: rank 0 initiates against rank 1, both operations in one job.
ours_once() {  # ours_once REP SIZE
  local rep=$1 size=$2 b csv=$WORK/ours.csv
  b=$(bytes_of "$size")
  rm -f "$csv"
  if ! timeout $((4 * DURATION + 120)) mpirun --allow-run-as-root "${MPI_BIND[@]}" -np 2 \
    --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
    -x UCX_WARN_UNUSED_ENV_VARS=n "$OURS" --tls tcp,self --operation both --block-size "$size" \
    --batch-size "$BATCH" --threads "$THREADS" --depth 1 --buffer-size $((b * BATCH * THREADS)) \
    --duration "${DURATION}s" --csv "$csv" >"$WORK/ours.txt" 2>&1; then
    tail -15 "$WORK/ours.txt" >&2
    die 1 "transfer_bench failed ($size; log above)"
  fi
  awk -F, 'NR > 1 {print $3, $11}' "$csv" | while read -r op gbps; do
    record "$rep" "$size" "$op" ours "$gbps"
  done
}

COMMIT=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo "not a git checkout")
echo "vs_mooncake_te: Mooncake $SRC ($COMMIT), transfer_engine_bench --protocol=tcp" \
  "--metadata_server=P2PHANDSHAKE; ours $OURS --tls tcp,self"
echo "sizes: $SIZES, batch $BATCH, threads $THREADS, one batch in flight per thread," \
  "${DURATION} s per run, repeats $REPEATS, bind $BIND, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
[[ -z $CSV ]] || echo "repeat,size,op,engine,gbps" >"$CSV"
for ((rep = 1; rep <= REPEATS; rep++)); do
  for size in $SIZES; do
    if ((rep % 2)); then mooncake_both $rep "$size"; ours_once $rep "$size"
    else ours_once $rep "$size"; mooncake_both $rep "$size"; fi
  done
done

printf "%-8s %-6s %10s %12s %12s %7s\n" size op ours_GB/s mc-default mc-pool ratio
declare -A MIN
for size in $SIZES; do
  for op in read write; do
    ours=$(median <"$WORK/ours_${size}_$op")
    plain=$(median <"$WORK/mc-default_${size}_$op")
    pool=$(median <"$WORK/mc-pool_${size}_$op")
    ratio=$(awk -v a="$ours" -v b="$plain" -v c="$pool" \
      'BEGIN {if (c > b) b = c; printf "%.2f", (b > 0) ? a / b : 0}')
    printf "%-8s %-6s %10.3f %12.3f %12.3f %7s\n" "$size" $op "$ours" "$plain" "$pool" "$ratio"
    if [[ -z ${MIN[$op]:-} ]] || awk -v a="$ratio" -v b="${MIN[$op]}" 'BEGIN {exit !(a < b)}'; then
      MIN[$op]=$ratio
    fi
  done
done
echo "ratio: ours / the better of Mooncake's two configurations; medians of $REPEATS"
echo "vs_mooncake_te read_ratio=${MIN[read]} write_ratio=${MIN[write]} sizes=${SIZES// /,}" \
  "batch=$BATCH threads=$THREADS bind=$BIND"
