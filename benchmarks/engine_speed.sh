#!/usr/bin/env bash
# The reference model's speed (issue 29, docs/MODEL.md "Speed"): for each preset, prefill
# tokens/s of one chunk from an empty cache and decode tokens/s of a batch at a context (KV in
# blocks of 512 tokens, a live run's), beside
#   - BLIS's own sgemm GFLOP/s at the prefill's linear-layer shapes (prefill's matmul FLOPs,
#     attention included, as a fraction of it),
#   - the memory-bandwidth roofline of a decode step (all weights + the batch's KV read once, at
#     the memcpy bandwidth measured in the same run),
#   - the same model in PyTorch eager mode (python3-torch, installed when missing), loading the
#     same seeded weights from a checkpoint engine_bench writes, its logits checked against ours
#     within 1e-4.
# Everything runs on one thread, side by side in one run; medians of the thread's CPU time (on a
# loaded shared machine wall time is mostly waiting for a core). Last line:
#   engine_speed prefill_vs_sgemm=<r> decode_vs_roofline=<r> vs_torch=<r>
# (the largest preset's ratios; vs_torch is the lower of the prefill and decode speed-ups).
# Targets: prefill_vs_sgemm >= 0.6 at 2k-token chunks, decode_vs_roofline >= 0.5,
# vs_torch >= 1.5. Runs from the repository root with no arguments.
set -euo pipefail
usage() {
  cat <<'USAGE'
Usage: benchmarks/engine_speed.sh [--build DIR] [--presets "tiny mini small"] [--chunk T]
                                  [--batch B] [--context L] [--steps S] [--reps R]

  --build DIR      build folder holding benchmarks/engine_bench (default: build)
  --presets LIST   model presets, smallest first (default: "tiny mini small")
  --chunk T        prefill chunk in tokens (default: 2048)
  --batch B        decode batch (default: 8)
  --context L      tokens of context per sequence before decoding (default: 512)
  --steps S        decode steps per repetition (default: 8)
  --reps R         repetitions; medians are quoted (default: 3)
  -h, --help       this text
USAGE
}
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build" presets="tiny mini small" chunk=2048 batch=8 context=512 steps=8 reps=3
while (($# > 0)); do
  case $1 in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --presets) presets=${2:?--presets needs a list}; shift 2 ;;
    --chunk) chunk=${2:?--chunk needs a number}; shift 2 ;;
    --batch) batch=${2:?--batch needs a number}; shift 2 ;;
    --context) context=${2:?--context needs a number}; shift 2 ;;
    --steps) steps=${2:?--steps needs a number}; shift 2 ;;
    --reps) reps=${2:?--reps needs a number}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "engine_speed: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
bench="$build/benchmarks/engine_bench"
[[ -x $bench ]] || { echo "engine_speed: no $bench (build the engine_bench target)" >&2; exit 2; }
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  # shellcheck source=launch/lib-setup.sh
  source "$root/launch/lib-setup.sh"
  mooncake_install python3-torch python3-numpy
fi
# One thread everywhere: BLIS runs one unless told otherwise, torch is set to one.
export BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for p in $presets; do
  echo "engine_speed: $p: engine_bench (chunk $chunk, decode $batch x $context) ..." >&2
  "$bench" --model "$p" --chunk "$chunk" --batch "$batch" --context "$context" \
    --steps "$steps" --reps "$reps" --checkpoint "$out/$p" >"$out/$p.json"
done
echo "engine_speed: the same presets in PyTorch eager ..." >&2
# shellcheck disable=SC2086  # the preset list is split on purpose
/usr/bin/python3 "$root/benchmarks/engine_speed_torch.py" "$out" "$reps" $presets
