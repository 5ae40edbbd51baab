#!/usr/bin/env bash
# The SSD tier in the live job: a replay whose working set is several times store.dram, with
# store.ssd = on, must spill blocks, serve hits from SSD with 0 checksum failures and no read
# failures; a second run with --store.recover over the first run's folder must report the
# recovered blocks. `mooncake store inspect` passes an intact bucket file and flags a flipped
# byte. Skips without the conversation trace.
# Usage: ssd_serve_test.sh MOONCAKE CONFIG TRACE MPIRUN [mpirun args...]
set -u
mooncake=$1 config=$2 trace=$3
shift 3
dir=$(mktemp -d "${TMPDIR:-/tmp}"/ssd_serve_XXXXXX)
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' TERM  # num() ends the test this way when a counter is missing
# Bad values of the tier's options: one line naming the option, exit 2, before MPI starts.
for bad in "--store.ssd maybe" "--store.ssd_capacity 1MiB" "--store.promote_after -1" \
  "--store.recover $dir/missing"; do
  msg=$("$mooncake" $bad 2>&1)
  code=$?
  opt=${bad%% *}
  if [[ $code -ne 2 ]] || ! grep -q "${opt#--}" <<<"$msg"; then
    echo "FAIL: '$bad' should exit 2 naming ${opt#--} (exit $code: $msg)"
    exit 1
  fi
done
if [[ ! -f $trace ]]; then
  echo "SKIP: no trace at $trace (the option checks above ran)"
  exit 77
fi
# A 10 s failure timeout: these runs check the SSD tier, not failure detection.
common=(--config "$config" --trace "$trace" --trace.limit 150 --time_scale 8 --store.dram 8MiB
  --cluster.failure_timeout 10s --job.rpc_timeout 10s)
out=$(timeout 240 "$@" -np 6 "$mooncake" "${common[@]}" --store.ssd on --out "$dir/run1" 2>&1)
code=$?
echo "$out" | grep -E "prefix +hit|^store|ssd tier|kv blocks|result"
json=$dir/run1/summary.json
# A counter of summary.json; a missing key fails the test (an empty string would compare false).
num() {
  local v
  v=$(grep -o "\"$1\": [0-9.]*" "$json" | head -1 | awk '{print int($2)}')
  if [[ -z $v ]]; then
    echo "FAIL: $json has no counter '$1'" >&2
    kill -TERM $$
  fi
  echo "$v"
}
if [[ $code -ne 0 || ! -f $json ]]; then
  echo "FAIL: first run (exit $code)"
  exit 1
fi
if [[ $(num ssd_blocks_spilled) -eq 0 || $(num ssd_hits) -eq 0 || $(num kv_checksum_failures) -ne 0 ||
  $(num ssd_read_failures) -ne 0 ]]; then
  echo "FAIL: expected spills, SSD hits, 0 checksum and read failures"
  exit 1
fi
# mooncake store inspect: exit 0 on the intact file, 1 once a byte of its first block is flipped.
file=$(ls "$dir"/run1/ssd/rank*/bucket-*.h5 | head -1)
"$mooncake" store inspect "$file" >"$dir/inspect.txt"
code=$?
tail -1 "$dir/inspect.txt"
if [[ $code -ne 0 ]] || ! grep -q " 0 corrupt" "$dir/inspect.txt"; then
  echo "FAIL: inspect of an intact bucket file exited $code"
  exit 1
fi
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
  cp "$file" "$dir/damaged.h5"
  /usr/bin/python3 - "$dir/damaged.h5" <<'PY'
import sys, h5py
p = sys.argv[1]
with h5py.File(p, "r") as f:
    at = f["blocks"].id.get_offset() + int(f["index"][0]["offset"]) + 100
with open(p, "r+b") as b:
    b.seek(at); x = b.read(1); b.seek(at); b.write(bytes([x[0] ^ 0xFF]))
PY
  "$mooncake" store inspect "$dir/damaged.h5" >"$dir/inspect2.txt"
  code=$?
  tail -1 "$dir/inspect2.txt"
  if [[ $code -ne 1 ]] || ! grep -q "CORRUPT" "$dir/inspect2.txt"; then
    echo "FAIL: inspect of a damaged bucket file exited $code (want 1, a CORRUPT line)"
    exit 1
  fi
fi
out=$(timeout 240 "$@" -np 6 "$mooncake" "${common[@]}" --store.recover "$dir/run1/ssd" --out "$dir/run2" 2>&1)
code=$?
echo "$out" | grep -E "recovered|ssd tier|result"
json=$dir/run2/summary.json
if [[ $code -ne 0 || ! -f $json || $(num ssd_blocks_recovered) -eq 0 ||
  $(num ssd_blocks_dropped_at_recovery) -ne 0 || $(num kv_checksum_failures) -ne 0 ]]; then
  echo "FAIL: recovery run (exit $code) should report recovered blocks and no corruption"
  exit 1
fi
echo "PASS"
