#!/usr/bin/env bash
# mooncake p2p --in-memory against MPI_Bcast of the same bytes in Open MPI, and against every
# rank reading the file itself, on this machine, in one run (docs/P2P.md "Figures").
# Usage: benchmarks/p2p_vs_bcast.sh [options]
#   --build DIR        holds mooncake and p2p_bcast_bench (default build)
#   --dir DIR          where the object files are made (default /tmp/mooncake-p2p-vs-bcast)
#   --sizes "LIST"     object sizes (default "1GiB 4GiB")
#   --ranks "LIST"     job sizes: 1 source + N-1 receivers (default "4 8"); ranks beyond the
#                      cores are oversubscribed (the table says so)
#   --algorithms A     default: MPI_Bcast as Open MPI's tuned component picks it; all (the
#                      default): that, and each of its 9 bcast algorithms forced
#                      (coll_tuned_bcast_algorithm 1-9), the best one taken as the baseline
#   --keep             keep the object files
# Per size and job size, side by side: mooncake p2p (time from the source's registration to
# the last receiver's verified copy, every piece checked), MPI_Bcast (barrier to the last rank
# holding the bytes; checked with XXH3 afterwards, untimed), N-1 ranks each reading the file
# with cat from the page cache (hot) and after `echo 3 > /proc/sys/vm/drop_caches` (cold; said
# when refused). GB/s are bytes delivered per receiving rank / time. A configuration whose
# copies do not fit in MemAvailable (N x size) is skipped, saying so.
# Last line: p2p_vs_bcast ratio=<lowest p2p/MPI_Bcast throughput ratio>
#   source_share=<highest share of pieces read from the source>
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//;p}' "$0"
  exit 0
fi
build=build dir=/tmp/mooncake-p2p-vs-bcast sizes="1GiB 4GiB" ranks="4 8" algorithms=all keep=0
while (($# > 0)); do
  case $1 in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --dir) dir=${2:?--dir needs a folder}; shift 2 ;;
    --sizes) sizes=${2:?--sizes needs a list}; shift 2 ;;
    --ranks) ranks=${2:?--ranks needs a list}; shift 2 ;;
    --algorithms) algorithms=${2:?--algorithms needs default or all}; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "p2p_vs_bcast: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $algorithms == default || $algorithms == all ]] || { echo "p2p_vs_bcast: --algorithms default|all" >&2; exit 2; }
mooncake=$build/mooncake bench=$build/p2p_bcast_bench
for b in "$mooncake" "$bench"; do
  [[ -x $b ]] || { echo "p2p_vs_bcast: missing $b (build the targets mooncake and p2p_bcast_bench)" >&2; exit 2; }
done
command -v mpirun >/dev/null || { echo "p2p_vs_bcast: mpirun not found" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 UCX_WARN_UNUSED_ENV_VARS=n
mpi=(mpirun --oversubscribe --bind-to none --mca btl self,vader,tcp --mca btl_tcp_if_include lo
  --mca oob_tcp_if_include lo -x UCX_WARN_UNUSED_ENV_VARS=n)
bytes_of() { case $1 in *GiB) echo $((${1%GiB} << 30)) ;; *MiB) echo $((${1%MiB} << 20)) ;; *) echo "$1" ;; esac; }
mem_available() { echo $(($(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) * 1024)); }
gbps() { awk -v b="$1" -v s="$2" 'BEGIN {printf "%.3f", b / s / 1e9}'; }
mkdir -p "$dir"
cleanup() { if ((keep == 0)); then rm -rf "$dir"; fi; }
trap cleanup EXIT
cores=$(nproc)
echo "p2p_vs_bcast: $(uname -n), $cores cores, $(awk '/^MemTotal:/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"

# N-1 concurrent `cat FILE > /dev/null`; prints the seconds until the last one ended.
parallel_cat() {
  local file=$1 n=$2 start pids=()
  start=$(date +%s.%N)
  for ((i = 0; i < n; ++i)); do cat "$file" >/dev/null & pids+=($!); done
  wait "${pids[@]}"
  echo "$(date +%s.%N) - $start" | bc
}

# One MPI_Bcast run; prints its seconds (empty when it failed).
bcast_seconds() {
  local n=$1 file=$2 extra=("${@:3}") line
  line=$("${mpi[@]}" "${extra[@]}" -np "$n" "$bench" "$file" 2>/dev/null | grep '^bcast ') || return 0
  [[ $line == *verified=1* ]] && sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$line"
}

worst_ratio="" worst_share=""
printf '%-6s %-5s %-15s %9s %7s %6s %9s %7s %-8s %6s %7s %7s\n' size ranks placement p2p_s p2p_GB/s share \
  bcast_s GB/s bcast_by ratio cat_hot cat_cold
for size in $sizes; do
  bytes=$(bytes_of "$size")
  file=$dir/object-$size
  if [[ ! -f $file || $(stat -c %s "$file") != "$bytes" ]]; then
    echo "making $file ($size of pseudo-random bytes)..." >&2
    "$bench" --make "$file" "$bytes"
  fi
  for n in $ranks; do
    need=$((n * bytes)) avail=$(mem_available)
    placement="$n on $cores cores"
    ((n > cores)) && placement="oversubscribed"
    if ((need * 100 > avail * 85)); then
      printf '%-6s %-5s skipped: %d copies need %d GiB, MemAvailable is %d GiB\n' "$size" "$n" "$n" \
        $((need >> 30)) $((avail >> 30))
      continue
    fi
    cat "$file" >/dev/null  # the source reads it from the page cache, as the MPI root does
    p2p_line=$("${mpi[@]}" -np "$n" "$mooncake" p2p --source "$file" --in-memory 2>&1 |
      grep '^p2p result=') || { echo "p2p_vs_bcast: mooncake p2p failed at $size x $n" >&2; exit 1; }
    [[ $p2p_line == *"result=OK"* ]] || { echo "p2p_vs_bcast: $p2p_line" >&2; exit 1; }
    p2p_s=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$p2p_line")
    share=$(sed -n 's/.*source_share=\([0-9.]*\).*/\1/p' <<<"$p2p_line")
    best="" best_by=""
    s=$(bcast_seconds "$n" "$file")
    [[ -n $s ]] && best=$s best_by=ompi
    if [[ $algorithms == all ]]; then
      for a in 1 2 3 4 5 6 7 8 9; do
        s=$(bcast_seconds "$n" "$file" --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_bcast_algorithm "$a")
        if [[ -n $s ]] && { [[ -z $best ]] || (($(echo "$s < $best" | bc))); }; then best=$s best_by=alg$a; fi
      done
    fi
    [[ -n $best ]] || { echo "p2p_vs_bcast: every MPI_Bcast run failed at $size x $n" >&2; exit 1; }
    hot=$(parallel_cat "$file" $((n - 1)))
    cold="refused"
    if sync && (echo 3 >/proc/sys/vm/drop_caches) 2>/dev/null; then
      cold=$(gbps "$bytes" "$(parallel_cat "$file" $((n - 1)))")
    fi
    ratio=$(awk -v b="$best" -v p="$p2p_s" 'BEGIN {printf "%.3f", b / p}')  # same bytes
    printf '%-6s %-5s %-15s %9.3f %7.3f %6.3f %9.3f %7.3f %-8s %6.2f %7.3f %7s\n' "$size" "$n" \
      "$placement" "$p2p_s" "$(gbps "$bytes" "$p2p_s")" "$share" "$best" "$(gbps "$bytes" "$best")" \
      "$best_by" "$ratio" "$(gbps "$bytes" "$hot")" "$cold"
    if [[ -z $worst_ratio ]] || (($(echo "$ratio < $worst_ratio" | bc))); then worst_ratio=$ratio; fi
    if [[ -z $worst_share ]] || (($(echo "$share > $worst_share" | bc))); then worst_share=$share; fi
  done
done
[[ -n $worst_ratio ]] || { echo "p2p_vs_bcast: no configuration fitted in memory" >&2; exit 1; }
echo "GB/s: bytes per receiving rank / time; ratio = MPI_Bcast time / p2p time (>1: p2p faster);"
echo "share: pieces read from the source / pieces read; cat: N-1 ranks reading the file at once"
echo "p2p_vs_bcast ratio=$worst_ratio source_share=$worst_share"
