#!/usr/bin/env bash
# run_fuzz.sh BINARY CORPUS_DIR SECONDS MAX_LEN: runs one libFuzzer target for SECONDS over a copy
# of its seed corpus in a fresh temp folder (new inputs land there, never in the source tree).
# Exit status is libFuzzer's: non-zero on a crash, leak, timeout, OOM or sanitizer report.
#
# libFuzzer's progress (a line per new input, thousands in 10 s) goes to a log, not to CTest:
# a CI summary keeps the head and tail of a failing test's output, and the report that says why
# a run failed sat in the middle, cut out. So a pass prints the run's totals; a failure prints
# the exit status, the report and the reproducer first, the seed and corpus after them.
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
log=$work/fuzz.log
status=0
# libFuzzer's own default failure status is 77, which CTest would read as a skip: use 1.
"$binary" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
  -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" >"$log" 2>&1 || status=$?

if [[ $status -eq 0 ]]; then
  grep -E '^INFO: Seed|INITED|DONE|^stat::' "$log" || true
  exit 0
fi
if [[ $status -gt 128 ]]; then
  why=""
  [[ $status -eq 137 ]] && why=" (SIGKILL: the kernel's OOM killer, or CTest's timeout)"
  echo "FAIL: $(basename "$binary") was killed by signal $((status - 128))$why after $SECONDS s"
else
  echo "FAIL: $(basename "$binary") exited $status after $SECONDS s"
fi
echo "--- the report (lines from the first sanitizer or libFuzzer report on, at most 120) ---"
first=$(grep -n -m1 -E '==[0-9]+==|fuzz check failed|deadly signal|out-of-memory|Timeout|runtime error|LeakSanitizer' "$log" | cut -d: -f1 || true)
if [[ -n $first ]]; then
  tail -n +"$first" "$log" | head -120
else
  echo "(no report line found; the log's last 60 lines)"
  tail -60 "$log"
fi
for f in "$work"/artifacts/*; do
  [[ -e $f ]] || continue
  echo "reproducer $(basename "$f") (base64): $(base64 -w0 "$f" | head -c 4096)"
done
echo "--- the run's set-up (seed, corpus) ---"
grep -E '^INFO|INITED' "$log" | head -12 || true
[[ $status -eq 77 ]] && status=1  # never a skip once the fuzzer ran
exit $status
