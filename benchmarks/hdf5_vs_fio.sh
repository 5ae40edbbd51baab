#!/usr/bin/env bash
# Durable spills and cold promotions of the HDF5 SSD tier against fio on the same folder, same
# block sizes and bytes, in one run.
# Usage: benchmarks/hdf5_vs_fio.sh [BUILD_DIR] [DIR] [TOTAL] [REPEATS]
#   BUILD_DIR  holds benchmarks/store_hdf5_bench (default build)
#   DIR        scratch folder on the disk under test (default /tmp/mooncake-hdf5-vs-fio)
#   TOTAL      bytes per block size, tool and repeat (default 512MiB)
#   REPEATS    rounds, the tools interleaved in each; figures are medians (default 3)
# Durable write: the tier spills with fsync on (group commit: each group of queued blocks ends
# with one fdatasync; its mean group size is printed) and its time ends when the last block is
# on disk. fio writes the same block size two ways, syncing after as many blocks N as the
# tier's mean group (--fdatasync=N): buffered, and O_DIRECT (--direct=1). fio leaves its final
# --end_fsync out of its runtime and issues an fdatasync only before a next write, so its file
# is the smallest multiple of N blocks not below TOTAL, plus one block: every group is then
# followed by a counted fdatasync (only that one extra block is synced outside the timing), and
# fio's MB/s include the syncs, as the tier's do. Two more fio writes give it what the tier has:
# buffered with writeback started every 8 MiB (--sync_file_range=write:N, as the tier's writer
# does), and O_DIRECT through libaio with 16 requests in flight. The baseline is the fastest.
# Cold read: the tier reads every block back (checksum verified, as a promotion does) after
# its files' pages were synced and dropped (posix_fadvise DONTNEED per file). fio reads its
# file two ways: O_DIRECT (--direct=1) and buffered after the same per-file drop
# (--invalidate=1), and O_DIRECT through libaio with 16 requests in flight. The baseline is the
# fastest of the three. When the script may write
# /proc/sys/vm/drop_caches (root), it also drops the whole page cache before every cold read of
# either tool (DROP_CACHES=0 turns that off); it says which it did.
# Both tools use one thread; fio psync has one request in flight, fio libaio 16, the tier its
# writer thread (and the reader's one request at a time).
# Ratios are tier / baseline per block size (medians), then geometric means over the sizes.
# Last line: hdf5_vs_fio durable_write_ratio=<r> cold_read_ratio=<r>
set -euo pipefail
# --help prints the comment block above.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi
BUILD=${1:-build}
DIR=${2:-/tmp/mooncake-hdf5-vs-fio}
TOTAL=${3:-512MiB}
REPEATS=${4:-3}
BENCH="$BUILD/benchmarks/store_hdf5_bench"
PY=/usr/bin/python3
[[ -x "$BENCH" ]] || { echo "missing $BENCH (build target store_hdf5_bench)" >&2; exit 2; }
command -v fio >/dev/null || { echo "fio not installed" >&2; exit 2; }
[[ "$REPEATS" =~ ^[1-9][0-9]*$ ]] || { echo "REPEATS must be a positive integer: $REPEATS" >&2; exit 2; }
fio_size=$($PY -c "
import re, sys
m = re.fullmatch(r'(\d+)(KiB|MiB|GiB)?', '$TOTAL')
if not m: sys.exit('TOTAL must be a byte count such as 512MiB: $TOTAL')
print(int(m[1]) * {None: 1, 'KiB': 1 << 10, 'MiB': 1 << 20, 'GiB': 1 << 30}[m[2]])") || exit 2
mkdir -p "$DIR"

drop_global=0
if [[ ${DROP_CACHES:-1} == 1 ]] && { sync; (echo 3 >/proc/sys/vm/drop_caches) 2>/dev/null; }; then
  drop_global=1
  echo "cold reads: /proc/sys/vm/drop_caches before each, plus the per-file drop of each tool"
else
  echo "cold reads: per-file drop only (posix_fadvise DONTNEED; fio --invalidate=1 and O_DIRECT);" \
       "writing /proc/sys/vm/drop_caches was refused or DROP_CACHES=0"
fi
drop() { if [[ $drop_global == 1 ]]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi; }

# fio JOB_ARGS... -> MB/s of its one job (read or write, whichever moved bytes).
fio_mbps() {
  fio --name=j --directory="$DIR" --filename=fio.dat --ioengine=psync \
      --output-format=json "$@" |
    $PY -c "import json,sys;j=json.load(sys.stdin)['jobs'][0];print((j['write']['bw_bytes']+j['read']['bw_bytes'])/1e6)"
}

rows=$(mktemp)
trap 'rm -f "$rows"; rm -rf "$DIR/hdf5" "$DIR/fio.dat"; rmdir "$DIR" 2>/dev/null || true' EXIT
for ((round = 1; round <= REPEATS; ++round)); do
  for bs in 256KiB 1MiB 16MiB; do
    bytes=$($PY -c "print({'256KiB':262144,'1MiB':1048576,'16MiB':16777216}['$bs'])")
    # The tier: durable spill, then the drop(s), then the cold read, in one process.
    line=$("$BENCH" "$DIR/hdf5" "$bs" "$TOTAL" fsync cold $([[ $drop_global == 1 ]] && echo dropall))
    field() { sed -E "s/.*$1=([0-9.]+).*/\1/" <<<"$line"; }
    hw=$(field write_MBps); group=$(field blocks_per_commit); hr=$(field read_MBps)
    per_sync=$($PY -c "print(max(1, round($group)))")
    synced_size=$($PY -c "n = $per_sync * $bytes; print(-(-$fio_size // n) * n + $bytes)")
    common=(--bs="$bytes" --fdatasync="$per_sync" --end_fsync=1 --size="$synced_size")
    fw_buf=$(fio_mbps --rw=write --direct=0 "${common[@]}")
    rm -f "$DIR/fio.dat"
    fw_dir=$(fio_mbps --rw=write --direct=1 "${common[@]}")
    rm -f "$DIR/fio.dat"
    wb_every=$($PY -c "print(max(1, (8 << 20) // $bytes))")
    fw_wb=$(fio_mbps --rw=write --direct=0 --sync_file_range=write:"$wb_every" "${common[@]}")
    rm -f "$DIR/fio.dat"
    fw_aio=$(fio_mbps --rw=write --direct=1 --ioengine=libaio --iodepth=16 "${common[@]}")
    drop
    fr_dir=$(fio_mbps --rw=read --direct=1 --bs="$bytes" --size="$fio_size")
    drop
    fr_buf=$(fio_mbps --rw=read --direct=0 --invalidate=1 --bs="$bytes" --size="$fio_size")
    drop
    fr_aio=$(fio_mbps --rw=read --direct=1 --ioengine=libaio --iodepth=16 --bs="$bytes" \
      --size="$fio_size")
    rm -f "$DIR/fio.dat"
    printf 'round %d %-7s tier write %6.0f MB/s (%s blocks/sync)  fio %6.0f buffered, %6.0f direct, %6.0f writeback, %6.0f libaio (fdatasync=%s) |' \
      "$round" "$bs" "$hw" "$group" "$fw_buf" "$fw_dir" "$fw_wb" "$fw_aio" "$per_sync"
    printf '  tier cold read %6.0f  fio %6.0f direct, %6.0f buffered, %6.0f libaio\n' \
      "$hr" "$fr_dir" "$fr_buf" "$fr_aio"
    echo "$bs $hw $fw_buf $fw_dir $fw_wb $fw_aio $hr $fr_dir $fr_buf $fr_aio" >>"$rows"
  done
done
$PY - "$rows" <<'EOF'
import math, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    bs, *vals = line.split()
    rows.setdefault(bs, []).append(list(map(float, vals)))
print("medians over %d round(s), MB/s:" % len(next(iter(rows.values()))))
print("%-7s %8s %8s %8s %8s %8s %6s %8s %8s %8s %8s %6s" % (
      "block", "tier_wr", "fio_buf", "fio_dir", "fio_wb", "fio_aio", "ratio",
      "tier_rd", "fio_dir", "fio_buf", "fio_aio", "ratio"))
w_ratios, r_ratios = [], []
for bs, rs in rows.items():
    m = [statistics.median(r[i] for r in rs) for i in range(9)]
    wr, rr = m[0] / max(m[1:5]), m[5] / max(m[6:9])  # against fio's best way
    w_ratios.append(wr)
    r_ratios.append(rr)
    print("%-7s %8.0f %8.0f %8.0f %8.0f %8.0f %6.2f %8.0f %8.0f %8.0f %8.0f %6.2f"
          % (bs, *m[:5], wr, *m[5:], rr))
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
print("hdf5_vs_fio durable_write_ratio=%.2f cold_read_ratio=%.2f" % (g(w_ratios), g(r_ratios)))
EOF
