#!/usr/bin/env bash
# Disaggregated generation with the reference engine gives exactly the tokens of one process
# (issue 29, docs/MODEL.md): a 6-rank job over a 40-request synthetic trace with shared prefixes,
# tiny preset, every request's output_ids equal to `mooncake generate`'s on the same trace, and
# token_mismatches = 0 in summary.json. Modes:
#   ssd        the HDF5 tier on with a 4 MiB DRAM: prefix blocks loaded from DRAM, loaded from SSD
#              and recomputed (the store dropped them) all counted above zero
#   store_kill store.replicas = 2 and store rank 1 SIGKILLed mid-run: lost 0, still no mismatch
#   swap_kv    fault.swap_kv: a prefill rank swaps two blocks' KV after their checksums were
#              taken; the run reports checksum failures and exits non-zero
#   gpu        engine.device = cuda: prefill and decode ranks compute on the GPU, the conductor's
#              check on the CPU; exits 77 (skipped) where `mooncake --version` finds no GPU
# Under the sanitizers (SANITIZE non-empty) the model computes about 10x slower: the workload
# shrinks to 12 shorter requests of 8 tokens, the token check is the job's own, and the SSD
# counters are not required (too few blocks to count on each).
# Usage: token_identity_test.sh MODE MOONCAKE LAUNCHER SANITIZE MPIRUN [extra mpirun args...]
set -u
mode=$1 mooncake=$2 launcher=$3 sanitize=$4 mpirun=$5
shift 5
dir=$(mktemp -d "${TMPDIR:-/tmp}"/token_identity_XXXXXX)
trap 'pkill -KILL -f "^$mooncake .*--out $dir/run" 2>/dev/null; rm -rf "$dir"' EXIT
fail() {
  echo "FAIL ($mode): $*"
  # A sanitizer's report first, with its stacks (CI shows an excerpt of the output).
  grep -m1 -A45 -E "ERROR: (Address|Leak)Sanitizer|runtime error|Tracer caught" "$dir/log" 2>/dev/null |
    grep -E "ERROR|runtime error|Tracer|#[0-9]+ |freed by|previously allocated|located"
  tail -30 "$dir/log" 2>/dev/null
  exit 1
}
cd "$dir" || exit 1
if [[ $mode == gpu ]]; then
  gpus=$("$mooncake" --version | tail -1)
  [[ $gpus =~ ,\ [1-9][0-9]*\ GPU ]] || { echo "SKIP (gpu): needs a CUDA GPU: $gpus"; exit 77; }
fi
workload=(--synthetic.requests 40 --synthetic.rate 4 --synthetic.new_tokens 600
  --synthetic.max_input 4096)
max_output=32
if [[ -n $sanitize ]]; then
  workload=(--synthetic.requests 12 --synthetic.rate 2 --synthetic.prompt_blocks 2
    --synthetic.new_tokens 300 --synthetic.max_input 2048)
  max_output=8
fi
# The workload as a trace file, so that `mooncake generate` reads the same requests.
"$mooncake" eval "${workload[@]}" --synthetic.write "$dir/synthetic.jsonl" --plots 0 \
  --out "$dir/eval" >"$dir/eval.log" 2>&1 || fail "mooncake eval --synthetic.write exited $?"

args=(--engine.kind reference --engine.model tiny --engine.max_output $max_output --time_scale 1
  --trace "$dir/synthetic.jsonl" --job.plots off --cluster.failure_timeout 3s --out "$dir/run")
roles="conductor:1 store:1 prefill:2 decode:2"
case $mode in
  ssd) args+=(--store.ssd on --store.dram 4MiB --store.spill_queue 2MiB) ;;
  store_kill)
    roles="conductor:1 store:2 prefill:2 decode:1"
    args+=(--store.replicas 2 --fault.kill 1@4s)
    ;;
  swap_kv) args+=(--fault.swap_kv on) ;;
  gpu) args+=(--engine.device cuda) ;;
  *) fail "unknown mode" ;;
esac
MOONCAKE_MPIRUN_ARGS="$*" timeout 240 "$launcher" --mpirun "$mpirun" --bin "$mooncake" \
  --roles "$roles" --spread none -- "${args[@]}" >"$dir/log" 2>&1
rc=$?
grep -E "requests  total|^store |ssd tier|^tokens|kv blocks|DEAD RANK|result" "$dir/log"
json=$dir/run/summary.json
[[ -f $json ]] || fail "no summary.json (launcher exit $rc)"
num() { /usr/bin/python3 -c "import json,sys; print(int(json.load(open('$json'))['extra']['$1']))"; }
if [[ $mode == swap_kv ]]; then
  ((rc != 0)) || fail "the run exited 0 although KV was swapped"
  (($(num kv_checksum_failures) > 0)) || fail "no checksum failure reported"
  echo "PASS (swap_kv): exit $rc, $(num kv_checksum_failures) checksum failures"
  exit 0
fi
((rc == 0)) || fail "launch/mooncake-mpirun exited $rc"
if [[ $mode == gpu ]]; then
  grep -q "matmul cuBLAS SGEMM on GPU 0" "$dir/log" || fail "the clocks line does not name the GPU"
fi
grep -q "lost 0  failed 0" "$dir/log" || fail "requests lost or failed"
(($(num token_mismatches) == 0)) || fail "token_mismatches = $(num token_mismatches)"
(($(num requests_token_checked) > 0)) || fail "no request's tokens were checked"
if [[ $mode == ssd && -z $sanitize ]]; then
  for c in prefix_blocks_from_dram prefix_blocks_from_ssd prefix_blocks_recomputed; do
    (($(num $c) > 0)) || fail "$c = 0 (expected above zero)"
  done
fi
# Independently of the job's own check: tokens.jsonl against `mooncake generate` (once: it
# computes every request again).
[[ $mode == ssd && -z $sanitize ]] || { echo "PASS ($mode)"; exit 0; }
"$mooncake" generate --model tiny --trace "$dir/synthetic.jsonl" --max-tokens $max_output \
  >"$dir/generate.jsonl" 2>"$dir/generate.err" || fail "mooncake generate exited $?"
# The same kernels, not only the same argmax: BLIS chose its generic kernels in the job's ranks
# (another summation order) while generate ran zen3 ones, and the tokens still agreed.
job_matmul=$(grep -o "matmul [^)]*)" "$dir/log" | head -1)
generate_matmul=$(grep -o "matmul [^)]*)" "$dir/generate.err" | head -1)
echo "job: $job_matmul; generate: $generate_matmul"
[[ -n $job_matmul && $job_matmul == "$generate_matmul" ]] ||
  fail "the job's matmul kernels ('$job_matmul') are not generate's ('$generate_matmul')"
/usr/bin/python3 - "$dir/run/tokens.jsonl" "$dir/generate.jsonl" <<'PY' || fail "tokens differ"
import json, sys
job = {r["request"]: r["output_ids"] for r in map(json.loads, open(sys.argv[1]))}
ref = {r["request"]: r["output_ids"] for r in map(json.loads, open(sys.argv[2]))}
bad = [k for k in job if job[k] != ref.get(k)]
print(f"tokens.jsonl: {len(job)} requests, {len(bad)} differ from mooncake generate")
sys.exit(1 if bad or not job else 0)
PY
echo "PASS ($mode)"
