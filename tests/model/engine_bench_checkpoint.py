#!/usr/bin/env python3
"""benchmarks/engine_speed.sh's PyTorch model loads the checkpoint engine_bench writes from the
seeded weights; this checks that checkpoint is those weights: `mooncake generate --model DIR`
on it gives bit for bit the logits engine_bench computed from the preset after its check prompt
(F32 is read back exactly), and the preset's own `generate` gives them too.

usage: engine_bench_checkpoint.py ENGINE_BENCH MOONCAKE
"""
import json
import subprocess
import sys
import tempfile


def generate_logits(mooncake, model, prompt):
    line = subprocess.run(
        [mooncake, "generate", "--model", model, "--prompt-ids", ",".join(map(str, prompt)),
         "--max-tokens", "1", "--print-logits"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(line)["prompt_logits"]


def main():
    bench, mooncake = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = f"{tmp}/tiny"
        out = subprocess.run(
            [bench, "--model", "tiny", "--chunk", "64", "--batch", "2", "--context", "16",
             "--steps", "2", "--reps", "1", "--checkpoint", ckpt],
            check=True, capture_output=True, text=True).stdout
        ours = json.loads(out)
        for key in ("prefill", "decode", "sgemm_gflops"):
            assert key in ours, f"engine_bench's JSON has no {key}"
        prompt, want = ours["check_prompt"], ours["check_logits"]
        for model in (ckpt, "tiny"):
            got = generate_logits(mooncake, model, prompt)
            diff = sum(1 for a, b in zip(got, want) if a != b)
            if len(got) != len(want) or diff:
                print(f"engine_bench_checkpoint: generate --model {model}: {diff} of"
                      f" {len(want)} logits differ from engine_bench's", file=sys.stderr)
                return 1
        print(f"engine_bench_checkpoint: {len(want)} logits equal from the checkpoint and the preset")
    return 0


if __name__ == "__main__":
    sys.exit(main())
