#!/usr/bin/env bash
# tools/fuzz_long.sh [--build DIR] [--seconds N] [TARGET...]
# The long fuzz run: each libFuzzer target (all 11 unless some are named) for N seconds over a
# copy of its seed corpus (tests/fuzz/corpus), one after the other, through the same
# tests/fuzz/run_fuzz.sh as CTest. CI's `ctest -L fuzz` runs each for 10 s; this is the run for
# whoever has the time (docs/RELIABILITY.md "Fuzzing").
#   --build DIR    the build with the fuzz targets (default build-asan/, which launch/test makes;
#                  or any build configured with clang and -DMOONCAKE_FUZZ=ON)
#   --seconds N    seconds per target (default 600)
# Prints one line per target (PASS / FAIL, runs, seconds) and a summary; exit 1 if any failed.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build-asan seconds=600 targets=()
usage() { sed -n '2,/^set -/{/^set -/d;s/^# \{0,1\}//;p}' "$0"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    -*) echo "fuzz_long.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [[ ! $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz_long.sh: --seconds must be a positive whole number (got '$seconds')" >&2
  exit 2
fi
# The same limits as the CTest entries (tests/fuzz/CMakeLists.txt): the longest input each takes.
declare -A max_len=([fuzz_rpc_frame]=4096 [fuzz_store_messages]=8192 [fuzz_ssd_messages]=8192
  [fuzz_serve_messages]=4096 [fuzz_remote_descriptor]=1024 [fuzz_bootstrap_record]=4096
  [fuzz_trace_line]=4096 [fuzz_ini]=4096 [fuzz_units]=64 [fuzz_job_options]=4096
  [fuzz_hdf5_recovery]=8192 [fuzz_connection_file]=4096 [fuzz_p2p_messages]=8192)
if [[ ${#targets[@]} -eq 0 ]]; then
  mapfile -t targets < <(printf '%s\n' "${!max_len[@]}" | sort)
fi
for t in "${targets[@]}"; do
  if [[ -z ${max_len[$t]:-} ]]; then
    echo "fuzz_long.sh: unknown target '$t' (known: ${!max_len[*]})" >&2
    exit 2
  fi
  if [[ ! -x $build/tests/fuzz/$t ]]; then
    echo "fuzz_long.sh: $build/tests/fuzz/$t is not built (configure with clang and" \
      "-DMOONCAKE_FUZZ=ON, or run launch/test once; see tests/fuzz/README.md)" >&2
    exit 2
  fi
done
source "$root/launch/lib-setup.sh"
mooncake_sanitizer_env
echo "fuzz_long: ${#targets[@]} targets x ${seconds} s from $build (about $((${#targets[@]} * seconds / 60)) min)"
failed=0 n=0
for t in "${targets[@]}"; do
  n=$((n + 1))
  log=$(mktemp "${TMPDIR:-/tmp}/fuzz_long.$t.XXXXXX")
  start=$SECONDS
  "$root/tests/fuzz/run_fuzz.sh" "$build/tests/fuzz/$t" "$root/tests/fuzz/corpus/$t" "$seconds" \
    "${max_len[$t]}" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [[ $rc -eq 0 ]]; then
    printf '[%d/%d] PASS %-24s %12s runs %5d s\n' "$n" "${#targets[@]}" "$t" "${runs:-?}" $((SECONDS - start))
    rm -f "$log"
  else
    failed=$((failed + 1))
    printf '[%d/%d] FAIL %-24s (exit %d; log kept: %s)\n' "$n" "${#targets[@]}" "$t" "$rc" "$log"
    grep -E 'ERROR|reproducer|SUMMARY' "$log" | head -5
  fi
done
echo "fuzz_long: $((${#targets[@]} - failed)) passed, $failed failed"
[[ $failed -eq 0 ]]
