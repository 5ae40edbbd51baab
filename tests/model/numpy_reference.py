#!/usr/bin/env python3
"""`mooncake generate` against an independent NumPy implementation of LlamaForCausalLM.

Writes its own small checkpoints in the Hugging Face layout (config.json + model.safetensors,
written here with numpy and struct: no torch), one F32 with an untied head and one BF16 with a
tied head and another rope_theta, runs `mooncake generate --print-logits` on them and asserts:
  * the logits after the last prompt token agree within 1e-4 relative to the largest logit
    (NumPy computes in float64 from the same float32 / bfloat16 weights);
  * the greedy output_ids are the same tokens.
The NumPy model is written from the transformers code's formulas, not from the C++ one.

Usage: numpy_reference.py MOONCAKE_BINARY
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

TOLERANCE = 1e-4
MAX_TOKENS = 6


def bf16_bits(a):
    """float32 -> bfloat16 bits, round to nearest even."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bits_to_float(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def write_safetensors(path, tensors):
    """tensors: {name: (dtype, shape, raw bytes)}."""
    header, offset, blobs = {}, 0, []
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def make_checkpoint(folder, cfg, dtype, seed):
    """Random weights; returns them as float64 arrays exactly as stored."""
    rng = np.random.default_rng(seed)
    h, v, f = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    hd = h // cfg["num_attention_heads"]
    nq, nkv = cfg["num_attention_heads"] * hd, cfg["num_key_value_heads"] * hd
    shapes = {"model.embed_tokens.weight": (v, h), "model.norm.weight": (h,)}
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        shapes.update({p + "input_layernorm.weight": (h,), p + "post_attention_layernorm.weight": (h,),
                       p + "self_attn.q_proj.weight": (nq, h), p + "self_attn.k_proj.weight": (nkv, h),
                       p + "self_attn.v_proj.weight": (nkv, h), p + "self_attn.o_proj.weight": (h, nq),
                       p + "mlp.gate_proj.weight": (f, h), p + "mlp.up_proj.weight": (f, h),
                       p + "mlp.down_proj.weight": (h, f)})
    if not cfg["tie_word_embeddings"]:
        shapes["lm_head.weight"] = (v, h)
    weights, tensors = {}, {}
    for name, shape in shapes.items():
        if len(shape) == 1:
            w = (1.0 + 0.2 * rng.standard_normal(shape)).astype(np.float32)
        else:
            w = (rng.standard_normal(shape) / np.sqrt(shape[1] if "embed" not in name else 1.0)).astype(np.float32)
        if dtype == "BF16":
            bits = bf16_bits(w)
            weights[name] = bits_to_float(bits).astype(np.float64)
            tensors[name] = ("BF16", shape, bits.tobytes())
        else:
            weights[name] = w.astype(np.float64)
            tensors[name] = ("F32", shape, w.tobytes())
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors)
    with open(os.path.join(folder, "config.json"), "w") as out:
        json.dump(dict(cfg, architectures=["LlamaForCausalLM"], model_type="llama", hidden_act="silu",
                       torch_dtype="bfloat16" if dtype == "BF16" else "float32"), out)
    return weights


def rms_norm(x, w, eps):
    return w * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def logits_of(cfg, w, ids):
    """Logits at every position of `ids`, full causal attention, no cache."""
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg["hidden_size"] // nh
    eps = cfg["rms_norm_eps"]
    t = len(ids)
    x = w["model.embed_tokens.weight"][ids]
    inv_freq = 1.0 / (cfg["rope_theta"] ** (np.arange(0, hd, 2) / hd))
    freqs = np.outer(np.arange(t), inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb), np.sin(emb)
    mask = np.triu(np.full((t, t), -np.inf), k=1)
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        hs = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = (hs @ w[p + "self_attn.q_proj.weight"].T).reshape(t, nh, hd).transpose(1, 0, 2)
        k = (hs @ w[p + "self_attn.k_proj.weight"].T).reshape(t, nkv, hd).transpose(1, 0, 2)
        v = (hs @ w[p + "self_attn.v_proj.weight"].T).reshape(t, nkv, hd).transpose(1, 0, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = np.repeat(k, nh // nkv, axis=0)  # repeat_kv: head i reads kv head i // groups
        v = np.repeat(v, nh // nkv, axis=0)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(hd) + mask
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        attn = (probs @ v).transpose(1, 0, 2).reshape(t, nh * hd)
        x = x + attn @ w[p + "self_attn.o_proj.weight"].T
        hs = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = hs @ w[p + "mlp.gate_proj.weight"].T
        up = hs @ w[p + "mlp.up_proj.weight"].T
        x = x + ((gate / (1.0 + np.exp(-gate))) * up) @ w[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    return x @ head.T


def greedy(cfg, w, prompt, n):
    ids, out = list(prompt), []
    for _ in range(n):
        nxt = int(np.argmax(logits_of(cfg, w, ids)[-1]))
        out.append(nxt)
        ids.append(nxt)
    return out


def check(binary, folder, cfg, weights, prompts, label):
    cmd = [binary, "generate", "--model", folder, "--max-tokens", str(MAX_TOKENS), "--print-logits"]
    for p in prompts:
        cmd += ["--prompt-ids", ",".join(map(str, p))]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        sys.exit(f"{label}: {' '.join(cmd)} exited {run.returncode}: {run.stderr}")
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(lines) == len(prompts), run.stdout
    failures = 0
    for prompt, got in zip(prompts, lines):
        want = logits_of(cfg, weights, prompt)[-1]
        have = np.array(got["prompt_logits"], dtype=np.float64)
        err = np.max(np.abs(have - want)) / np.max(np.abs(want))
        want_ids = greedy(cfg, weights, prompt, MAX_TOKENS)
        ok = err <= TOLERANCE and got["output_ids"] == want_ids
        print(f"{label} prompt of {len(prompt)} tokens: max logit error {err:.2e} relative "
              f"(limit {TOLERANCE:g}); output_ids {got['output_ids']} numpy {want_ids}: "
              f"{'ok' if ok else 'MISMATCH'}")
        failures += not ok
    return failures


def main():
    binary = sys.argv[1]
    base = {"vocab_size": 96, "hidden_size": 48, "intermediate_size": 112, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "rms_norm_eps": 1e-6,
            "bos_token_id": 1, "eos_token_id": 2}
    cases = [("F32", dict(base, rope_theta=10000.0, tie_word_embeddings=False), 11),
             ("BF16", dict(base, rope_theta=500000.0, tie_word_embeddings=True), 12)]
    prompts = [[5], [1, 17, 33, 90, 4, 4, 61], [(i * 7 + 3) % 96 for i in range(37)]]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="mooncake-numpy-ref-") as tmp:
        for dtype, cfg, seed in cases:
            folder = os.path.join(tmp, dtype)
            os.makedirs(folder)
            weights = make_checkpoint(folder, cfg, dtype, seed)
            failures += check(binary, folder, cfg, weights, prompts, dtype)
    if failures:
        sys.exit(f"{failures} prompt(s) differ from the NumPy reference")
    print("mooncake generate equals the NumPy reference")


if __name__ == "__main__":
    main()
