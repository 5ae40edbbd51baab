#!/usr/bin/env bash
# run_fuzz.sh BINARY CORPUS_DIR SECONDS MAX_LEN: runs one libFuzzer target for SECONDS over a copy
# of its seed corpus in a fresh temp folder (new inputs land there, never in the source tree).
# Exit status is libFuzzer's: non-zero on a crash, leak, timeout, OOM or sanitizer report.
set -euo pipefail
if [[ $# -ne 4 ]]; then
  echo "usage: run_fuzz.sh BINARY CORPUS_DIR SECONDS MAX_LEN" >&2
  exit 2
fi
binary=$(realpath "$1") corpus=$2 seconds=$3 max_len=$4
if [[ ! -d $corpus ]] || [[ -z $(ls -A "$corpus") ]]; then
  echo "SKIP: no seed corpus at $corpus (run make_fuzz_seeds, see tests/fuzz/README.md)" >&2
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/artifacts"
cp -r "$corpus"/. "$work/corpus/"
cd "$work"
export TMPDIR=$work
# halt_on_error: the first report ends the run with a non-zero status.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
# libFuzzer's own default failure status is 77, which CTest would read as a skip: use 1.
"$binary" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
  -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" || status=$?
if [[ $status -ne 0 ]]; then
  for f in "$work"/artifacts/*; do
    [[ -e $f ]] || continue
    echo "reproducer $(basename "$f") (base64): $(base64 -w0 "$f" | head -c 4096)"
  done
fi
[[ $status -eq 77 ]] && status=1  # never a skip once the fuzzer ran
exit $status
