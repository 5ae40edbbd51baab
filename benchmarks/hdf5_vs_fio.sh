#!/usr/bin/env bash
# Spill and promote bandwidth of the HDF5 SSD tier against fio on the same folder, same run.
# Usage: benchmarks/hdf5_vs_fio.sh [BUILD_DIR] [DIR] [TOTAL]
#   BUILD_DIR  holds benchmarks/store_hdf5_bench (default build)
#   DIR        scratch folder on the disk under test (default /tmp/mooncake-hdf5-vs-fio)
#   TOTAL      bytes per size and tool (default 512MiB)
# Both tools write through the page cache (fio --direct=0) with no fsync (the tier's default
# flush policy is H5Fflush per block, which hands bytes to the OS but does not fsync; set
# FSYNC=1 to run both with an fdatasync per block instead). Reads are of the files just written,
# so both read hot from the page cache (fio --invalidate=0: the tier does not drop the cache
# either). Neither preallocates differently: fio's default fallocate is kept. Ratios are
# geometric means over the block sizes.
# Last line: hdf5_vs_fio write_ratio=<r> read_ratio=<r>
set -euo pipefail
# --help prints the comment block above.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi
BUILD=${1:-build}
DIR=${2:-/tmp/mooncake-hdf5-vs-fio}
TOTAL=${3:-512MiB}
BENCH="$BUILD/benchmarks/store_hdf5_bench"
PY=/usr/bin/python3
[[ -x "$BENCH" ]] || { echo "missing $BENCH (build target store_hdf5_bench)" >&2; exit 2; }
command -v fio >/dev/null || { echo "fio not installed" >&2; exit 2; }
FSYNC=${FSYNC:-0}
bench_fsync=""; fio_fsync=0
if [[ "$FSYNC" == 1 ]]; then bench_fsync=fsync; fio_fsync=1; fi
fio_size=$($PY -c "import re,sys;m=re.fullmatch(r'(\d+)(KiB|MiB|GiB)?','$TOTAL');print(int(m[1])*{None:1,'KiB':1<<10,'MiB':1<<20,'GiB':1<<30}[m[2]])")
mkdir -p "$DIR"
results=()
printf '%-8s %14s %14s %14s %14s\n' block hdf5_write fio_write hdf5_read fio_read
for bs in 256KiB 1MiB 16MiB; do
  bytes=$($PY -c "print({'256KiB':262144,'1MiB':1048576,'16MiB':16777216}['$bs'])")
  line=$("$BENCH" "$DIR/hdf5" "$bs" "$TOTAL" $bench_fsync)
  hw=$(sed -E 's/.*write_MBps=([0-9.]+).*/\1/' <<<"$line")
  hr=$(sed -E 's/.*read_MBps=([0-9.]+).*/\1/' <<<"$line")
  common=(--directory="$DIR" --filename=fio.dat --bs="$bytes" --size="$fio_size" --direct=0
          --ioengine=psync --fdatasync="$fio_fsync" --end_fsync=0 --invalidate=0
          --output-format=json)
  fw=$(fio --name=w --rw=write "${common[@]}" |
       $PY -c "import json,sys;print(json.load(sys.stdin)['jobs'][0]['write']['bw_bytes']/1e6)")
  fr=$(fio --name=r --rw=read "${common[@]}" |
       $PY -c "import json,sys;print(json.load(sys.stdin)['jobs'][0]['read']['bw_bytes']/1e6)")
  rm -f "$DIR/fio.dat"
  printf '%-8s %11.0f MB/s %9.0f MB/s %9.0f MB/s %9.0f MB/s\n' "$bs" "$hw" "$fw" "$hr" "$fr"
  results+=("$hw $fw $hr $fr")
done
rmdir "$DIR" 2>/dev/null || true
printf '%s\n' "${results[@]}" | $PY -c '
import math, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
print("hdf5_vs_fio write_ratio=%.2f read_ratio=%.2f" % (g([r[0] / r[1] for r in rows]), g([r[2] / r[3] for r in rows])))'
