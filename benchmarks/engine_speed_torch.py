#!/usr/bin/env python3
"""The Python half of benchmarks/engine_speed.sh: the same model in PyTorch eager mode.

usage: engine_speed_torch.py OUT REPS PRESET... (engine_speed.sh runs it with Debian's python3)

For each preset, reads engine_bench's JSON (OUT/PRESET.json) and the F32 checkpoint it wrote
(OUT/PRESET/), builds LlamaForCausalLM's arithmetic from docs/MODEL.md in plain torch ops (no
transformers package), checks its logits after engine_bench's check prompt against ours (within
1e-4 of the largest logit, so the comparison is of the same model), times a prefill of the same
chunk and decode steps at the same batch and context (medians of the thread's CPU time, one
thread like BLIS), and prints
the table and the last line

    engine_speed prefill_vs_sgemm=<r> decode_vs_roofline=<r> vs_torch=<r>

with the ratios of the largest preset measured (vs_torch: the lower of the prefill and decode
speed-ups over torch). Exits 1 when a logits check fails.
"""
import json
import math
import statistics
import struct
import sys
import time

# numpy and torch are imported in main(), so that --help works where torch is not installed.
np = torch = F = None


def load_checkpoint(folder):
    with open(f"{folder}/config.json") as f:
        cfg = json.load(f)
    with open(f"{folder}/model.safetensors", "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = memoryview(blob)[8 + n:]
    weights = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", name
        a, b = t["data_offsets"]
        arr = np.frombuffer(data[a:b], dtype="<f4").reshape(t["shape"])
        weights[name] = torch.from_numpy(arr.copy())
    return cfg, weights


class TorchLlama:
    def __init__(self, cfg, w):
        self.c = cfg
        self.w = w
        self.heads = cfg["num_attention_heads"]
        self.kv_heads = cfg["num_key_value_heads"]
        self.hd = cfg["head_dim"]
        self.eps = cfg["rms_norm_eps"]
        half = torch.arange(0, self.hd, 2, dtype=torch.int64).float() / self.hd
        self.inv_freq = 1.0 / (cfg["rope_theta"] ** half)
        self.head = w.get("lm_head.weight", w["model.embed_tokens.weight"])  # tied or not

    def norm(self, x, weight):
        var = x.pow(2).mean(-1, keepdim=True)
        return weight * (x * torch.rsqrt(var + self.eps))

    def rope(self, x, positions):
        freqs = positions[:, None].float() * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        x1, x2 = x[..., : self.hd // 2], x[..., self.hd // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def forward(self, tokens, caches, start):
        """tokens [B, T]; caches: per layer [k, v] of [B, kv_heads, S, hd] (or None);
        returns the logits after the last token [B, vocab]."""
        w = self.w
        B, T = tokens.shape
        x = w["model.embed_tokens.weight"][tokens]
        positions = torch.arange(start, start + T)
        group = self.heads // self.kv_heads
        for l in range(self.c["num_hidden_layers"]):
            p = f"model.layers.{l}."
            h = self.norm(x, w[p + "input_layernorm.weight"])
            q = F.linear(h, w[p + "self_attn.q_proj.weight"]).view(B, T, self.heads, self.hd)
            k = F.linear(h, w[p + "self_attn.k_proj.weight"]).view(B, T, self.kv_heads, self.hd)
            v = F.linear(h, w[p + "self_attn.v_proj.weight"]).view(B, T, self.kv_heads, self.hd)
            q = self.rope(q.transpose(1, 2), positions)
            k = self.rope(k.transpose(1, 2), positions)
            v = v.transpose(1, 2)
            if caches[l] is not None:  # the cache grows by concatenation, as transformers' does
                k = torch.cat((caches[l][0], k), dim=2)
                v = torch.cat((caches[l][1], v), dim=2)
            caches[l] = [k, v]
            kk = k.repeat_interleave(group, dim=1)  # query head h reads kv head h // group
            vv = v.repeat_interleave(group, dim=1)
            # transformers' eager attention (torch 1.13 has no scaled_dot_product_attention)
            scores = torch.matmul(q, kk.transpose(2, 3)) / math.sqrt(self.hd)
            if T > 1:  # causal: query i sees positions up to start + i
                S = kk.shape[2]
                mask = torch.ones(T, S, dtype=torch.bool).triu(S - T + 1)
                scores = scores.masked_fill(mask, float("-inf"))
            a = torch.matmul(torch.softmax(scores, dim=-1), vv)
            a = a.transpose(1, 2).reshape(B, T, self.heads * self.hd)
            x = x + F.linear(a, w[p + "self_attn.o_proj.weight"])
            h = self.norm(x, w[p + "post_attention_layernorm.weight"])
            g = F.silu(F.linear(h, w[p + "mlp.gate_proj.weight"]))
            u = F.linear(h, w[p + "mlp.up_proj.weight"])
            x = x + F.linear(g * u, w[p + "mlp.down_proj.weight"])
        x = self.norm(x[:, -1, :], w["model.norm.weight"])  # the head for the last token only
        return F.linear(x, self.head)


def measure(out, preset, reps):
    with open(f"{out}/{preset}.json") as f:
        ours = json.load(f)
    cfg, w = load_checkpoint(f"{out}/{preset}")
    m = TorchLlama(cfg, w)
    L = cfg["num_hidden_layers"]
    prompt = torch.tensor([ours["check_prompt"]])
    got = m.forward(prompt, [None] * L, 0)[0].numpy()
    want = np.array(ours["check_logits"], dtype=np.float64)
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))

    chunk = ours["prefill"]["chunk"]
    tokens = torch.tensor([[(j * 2654435761 + 11) % cfg["vocab_size"] for j in range(chunk)]])
    t = []
    for _ in range(reps):
        a = time.thread_time()
        m.forward(tokens, [None] * L, 0)
        t.append(time.thread_time() - a)
    prefill_tps = chunk / statistics.median(t)

    d = ours["decode"]
    B, S = d["batch"], d["context"]
    gen = torch.Generator().manual_seed(1)  # KV values do not change the time
    shape = (B, cfg["num_key_value_heads"], S, cfg["head_dim"])
    steps = max(1, int(d.get("steps", 8)))
    t = []
    for _ in range(reps):
        caches = [[torch.randn(shape, generator=gen), torch.randn(shape, generator=gen)]
                  for _ in range(L)]
        nxt = torch.full((B, 1), 3)
        for s in range(steps):
            a = time.thread_time()
            m.forward(nxt, caches, S + s)
            t.append(time.thread_time() - a)
    decode_tps = B / statistics.median(t)
    return ours, err, prefill_tps, decode_tps


def main():
    if len(sys.argv) < 4 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2
    global np, torch, F
    import numpy as np
    import torch
    import torch.nn.functional as F
    out, reps, presets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    torch.set_num_threads(1)
    ok = True
    last = None
    print(f"torch {torch.__version__}, 1 thread; ours: one thread as well")
    print(f"{'preset':7} {'chunk':>5} {'prefill tok/s':>13} {'GFLOP/s':>8} {'sgemm':>7} {'frac':>5}"
          f" | {'B x ctx':>9} {'decode tok/s':>12} {'roofline':>9} {'frac':>5}"
          f" | {'torch pre':>9} {'torch dec':>9} {'x pre':>5} {'x dec':>5} {'logit err':>9}")
    with torch.inference_mode():
        for p in presets:
            ours, err, tp, td = measure(out, p, reps)
            pf, dc = ours["prefill"], ours["decode"]
            frac_p = pf["gflops"] / ours["sgemm_gflops"]
            frac_d = dc["roofline_step_seconds"] / dc["step_seconds"]
            xp, xd = pf["tokens_per_s"] / tp, dc["tokens_per_s"] / td
            print(f"{p:7} {pf['chunk']:5d} {pf['tokens_per_s']:13.0f} {pf['gflops']:8.1f}"
                  f" {ours['sgemm_gflops']:7.1f} {frac_p:5.2f}"
                  f" | {dc['batch']:>3} x {dc['context']:<4} {dc['tokens_per_s']:12.0f}"
                  f" {dc['roofline_tokens_per_s']:9.0f} {frac_d:5.2f}"
                  f" | {tp:9.0f} {td:9.0f} {xp:5.2f} {xd:5.2f} {err:9.1e}")
            print(f"        {ours['backend']}; memcpy {dc['memcpy_gbs']:.1f} GB/s (read + written);"
                  f" decode reads {dc['weight_bytes'] / 2**20:.1f} MiB weights +"
                  f" {dc['kv_bytes'] / 2**20:.1f} MiB KV per step")
            if not err <= 1e-4:
                print(f"engine_speed: {p}: torch logits differ from ours by {err:.2e} of the"
                      " largest (limit 1e-4)", file=sys.stderr)
                ok = False
            last = (frac_p, frac_d, min(xp, xd))
    print(f"engine_speed prefill_vs_sgemm={last[0]:.2f} decode_vs_roofline={last[1]:.2f}"
          f" vs_torch={last[2]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
