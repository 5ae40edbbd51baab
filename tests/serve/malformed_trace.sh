#!/usr/bin/env bash
# A trace whose line 17 is malformed fails before any rank starts work, naming FILE:17 and exit 2;
# with --trace.skip_invalid the same trace runs and reports 1 skipped line.
# Usage: malformed_trace.sh MOONCAKE MPIRUN [mpirun args...]
set -u
mooncake=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trace=$dir/bad.jsonl
for i in $(seq 1 24); do
  if [[ $i -eq 17 ]]; then
    echo '{"timestamp": 1700, "input_length": 1024, "output_length": 8, "hash_ids": [0, 1, 2]}' >>"$trace"
  else
    printf '{"timestamp": %d, "input_length": 1024, "output_length": 8, "hash_ids": [0, %d]}\n' \
      $((i * 100)) $((i + 100)) >>"$trace"
  fi
done
out=$("$@" -np 4 "$mooncake" --trace "$trace" --time_scale 50 --out "$dir/run1" 2>&1)
code=$?
echo "$out" | tail -5
if [[ $code -ne 2 ]] || ! grep -q "bad.jsonl:17: hash_ids" <<<"$out"; then
  echo "FAIL: expected exit 2 naming bad.jsonl:17 (exit $code)"
  exit 1
fi
if [[ -e $dir/run1 ]]; then
  echo "FAIL: a run folder was written although the trace was rejected up front"
  exit 1
fi
# A 10 s failure timeout: this run checks the skipped line, not failure detection.
out=$("$@" -np 4 "$mooncake" --trace "$trace" --trace.skip_invalid --time_scale 50 \
  --cluster.failure_timeout 10s --job.rpc_timeout 10s --out "$dir/run2" 2>&1)
code=$?
echo "$out" | tail -8
if [[ $code -ne 0 ]] || ! grep -q "1 invalid trace lines skipped" <<<"$out" ||
  ! grep -q "requests  total 23 .*lost 0" <<<"$out"; then
  echo "FAIL: --trace.skip_invalid should run 23 requests and report 1 skipped (exit $code)"
  exit 1
fi
echo "PASS"
