#include "model/transformer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "model/attention.h"
#include "model/matmul.h"

namespace mooncake::model {

namespace {

// y = x / sqrt(mean(x^2) + eps) * weight, per row of `n` values.
void RmsNorm(const float* x, int64_t rows, int64_t n, const float* weight, double eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += double(xr[i]) * xr[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(sum / double(n) + eps));
    for (int64_t i = 0; i < n; ++i) y[r * n + i] = weight[i] * (xr[i] * inv);
  }
}

// The rotary embedding's cosines and sines at one position, half a head each. The angle is
// rounded to float32 as transformers computes it (position x inv_freq in float32); its cosine
// and sine are taken in double and rounded. Computed once per row for every head and layer.
void RopeTable(int64_t position, const std::vector<float>& inv_freq, float* cos, float* sin) {
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    const double angle = static_cast<float>(position) * inv_freq[i];
    cos[i] = static_cast<float>(std::cos(angle));
    sin[i] = static_cast<float>(std::sin(angle));
  }
}

// Rotate-half RoPE of one head vector in place: pairs (i, i + d/2).
void Rope(float* v, int32_t head_dim, const float* cos, const float* sin) {
  const int32_t half = head_dim / 2;
  for (int32_t i = 0; i < half; ++i) {
    const float a = v[i], b = v[i + half];
    v[i] = a * cos[i] - b * sin[i];
    v[i + half] = b * cos[i] + a * sin[i];
  }
}

}  // namespace

Transformer::Transformer(ModelConfig config, ModelWeights weights)
    : config_(std::move(config)), weights_(std::move(weights)) {
  // The linear layers' weights in Linear's layout (matmul.h), each held once: the nn.Linear
  // copies are dropped as they are converted. The embedding keeps its rows, and a tied output
  // head gets its own copy.
  const int64_t h = config_.hidden_size, q = int64_t{config_.num_heads} * config_.head_dim,
                kv = int64_t{config_.num_kv_heads} * config_.head_dim,
                ffn = config_.intermediate_size;
  auto convert = [](std::vector<float>* w, int64_t out, int64_t in) {
    LinearWeight lw = LinearWeight::FromNnLinear(w->data(), out, in);
    std::vector<float>().swap(*w);
    return lw;
  };
  for (LayerWeights& L : weights_.layers) {
    LayerLinears& lin = linears_.emplace_back();
    lin.q = convert(&L.q, q, h);
    lin.k = convert(&L.k, kv, h);
    lin.v = convert(&L.v, kv, h);
    lin.o = convert(&L.o, h, q);
    lin.gate = convert(&L.gate, ffn, h);
    lin.up = convert(&L.up, ffn, h);
    lin.down = convert(&L.down, h, ffn);
  }
  if (config_.tie_word_embeddings) {
    head_ = LinearWeight::FromNnLinear(weights_.embed.data(), config_.vocab_size, h);
  } else {
    head_ = convert(&weights_.lm_head, config_.vocab_size, h);
  }
  inv_freq_ = RopeInverseFrequencies(config_);
}

Result<Transformer> Transformer::Create(LoadedModel m) {
  ChooseMatmulKernels();  // before this process's first matmul: BLIS decides once
  const ModelConfig& c = m.config;
  MC_RETURN_IF_ERROR(c.Validate());
  MC_RETURN_IF_ERROR(CheckWeightSizes(c, m.weights));
  return Transformer(std::move(m.config), std::move(m.weights));
}

KvShape Transformer::KvShapeFor(int32_t block_tokens) const {
  return KvShape{config_.num_layers, config_.num_kv_heads, config_.head_dim, block_tokens};
}

Status Transformer::Prefill(std::span<const int32_t> tokens, KvCache* cache,
                            std::vector<float>* last_logits) const {
  return Prefill(tokens, cache, last_logits, LayerReady());
}

Status Transformer::Prefill(std::span<const int32_t> tokens, KvCache* cache,
                            std::vector<float>* last_logits, const LayerReady& on_layer) const {
  if (tokens.empty()) return InvalidArgument("Prefill: no tokens");
  const Segment one{cache, tokens};
  return Forward(std::span<const Segment>(&one, 1), last_logits, on_layer ? &on_layer : nullptr);
}

Status Transformer::DecodeStep(std::span<KvCache* const> caches, std::span<const int32_t> tokens,
                               std::vector<float>* logits) const {
  if (caches.size() != tokens.size() || caches.empty()) {
    return InvalidArgument(
        fmt::format("DecodeStep: {} caches for {} tokens", caches.size(), tokens.size()));
  }
  if (std::set<KvCache*>(caches.begin(), caches.end()).size() != caches.size()) {
    return InvalidArgument("DecodeStep: a cache appears twice in one batch");
  }
  std::vector<Segment> segments;
  for (size_t i = 0; i < caches.size(); ++i) segments.push_back({caches[i], tokens.subspan(i, 1)});
  return Forward(segments, logits);
}

// The rows of one pass (row r: a token of segment seg_of[r] at position pos_of[r] of its
// sequence) and the activations, sized once for every layer.
struct Transformer::Pass {
  Pass(const ModelConfig& c, int64_t rows)
      : rows(rows),
        h(c.hidden_size),
        hd(c.head_dim),
        nq(int64_t{c.num_heads} * c.head_dim),
        nkv(int64_t{c.num_kv_heads} * c.head_dim),
        ffn(c.intermediate_size),
        seg_of(rows),
        pos_of(rows),
        x(rows * h),
        xn(rows * h),
        q(rows * nq),
        k(rows * nkv),
        v(rows * nkv),
        att(rows * nq),
        y(rows * h),
        gate(rows * ffn),
        up(rows * ffn),
        rope_cos(rows * (hd / 2)),
        rope_sin(rows * (hd / 2)) {}

  const int64_t rows, h, hd, nq, nkv, ffn;
  std::vector<const Segment*> seg_of;
  std::vector<int64_t> pos_of;
  std::vector<float> x, xn, q, k, v, att, y, gate, up;
  std::vector<float> rope_cos, rope_sin;  // per row, half a head each
  std::vector<AttentionQuery> queries;
  std::vector<float> scratch;
};

Result<int64_t> Transformer::CheckSegments(std::span<const Segment> segments) const {
  const ModelConfig& c = config_;
  const KvShape want = KvShapeFor(0);
  int64_t rows = 0;
  for (const Segment& s : segments) {
    const KvShape& got = s.cache->shape();
    if (got.layers != want.layers || got.kv_heads != want.kv_heads ||
        got.head_dim != want.head_dim || got.block_tokens < 1) {
      return InvalidArgument(fmt::format(
          "KV cache of {} layers x {} kv heads x {} dims (blocks of {}) does not fit model {}",
          got.layers, got.kv_heads, got.head_dim, got.block_tokens, c.name));
    }
    for (int32_t t : s.tokens) {
      if (t < 0 || t >= c.vocab_size) {
        return InvalidArgument(
            fmt::format("token id {} outside the vocabulary [0, {})", t, c.vocab_size));
      }
    }
    rows += static_cast<int64_t>(s.tokens.size());
  }
  return rows;
}

void Transformer::Embed(std::span<const Segment> segments, Pass& p) const {
  int64_t r = 0;
  for (const Segment& s : segments) {
    int64_t pos = s.cache->Grow(static_cast<int64_t>(s.tokens.size()));
    for (int32_t t : s.tokens) {
      p.seg_of[r] = &s;
      p.pos_of[r] = pos++;
      std::copy_n(weights_.embed.data() + int64_t{t} * p.h, p.h, p.x.data() + r * p.h);
      ++r;
    }
  }
  const int64_t half = p.hd / 2;
  for (r = 0; r < p.rows; ++r) {
    RopeTable(p.pos_of[r], inv_freq_, &p.rope_cos[r * half], &p.rope_sin[r * half]);
  }
}

// RoPE on every row's queries and keys, and the keys and values into the rows' caches.
void Transformer::StoreKv(int32_t l, Pass& p) const {
  const ModelConfig& c = config_;
  const int64_t hd = p.hd, nq = p.nq, nkv = p.nkv;
  for (int64_t r = 0; r < p.rows; ++r) {
    const float* cos = p.rope_cos.data() + r * (hd / 2);
    const float* sin = p.rope_sin.data() + r * (hd / 2);
    for (int32_t head = 0; head < c.num_heads; ++head) Rope(&p.q[r * nq + head * hd], hd, cos, sin);
    KvCache& cache = *p.seg_of[r]->cache;
    const KvShape& shape = cache.shape();
    std::span<float> block = cache.mutable_block(p.pos_of[r] / shape.block_tokens);
    const int32_t slot = static_cast<int32_t>(p.pos_of[r] % shape.block_tokens);
    for (int32_t g = 0; g < c.num_kv_heads; ++g) {
      Rope(&p.k[r * nkv + g * hd], hd, cos, sin);
      for (int32_t d = 0; d < hd; ++d) {
        block[shape.Index(l, 0, g, d, slot)] = p.k[r * nkv + g * hd + d];
        block[shape.Index(l, 1, g, d, slot)] = p.v[r * nkv + g * hd + d];
      }
    }
  }
}

Status Transformer::AttentionLayer(int32_t l, Pass& p, const LayerReady* on_layer) const {
  const ModelConfig& c = config_;
  const LayerLinears& lin = linears_[l];
  const int64_t hd = p.hd, nq = p.nq;
  const int32_t group = c.num_heads / c.num_kv_heads;
  RmsNorm(p.x.data(), p.rows, p.h, weights_.layers[l].input_norm.data(), c.rms_norm_eps,
          p.xn.data());
  Linear(p.xn.data(), p.rows, lin.q, p.q.data());
  Linear(p.xn.data(), p.rows, lin.k, p.k.data());
  Linear(p.xn.data(), p.rows, lin.v, p.v.data());
  StoreKv(l, p);
  // This layer's KV of every row is written and attention only reads it: hand it over now.
  if (on_layer != nullptr) MC_RETURN_IF_ERROR((*on_layer)(l));
  // Per segment and kv head, its rows' queries of the heads in that group, together: they
  // share their loads of K and V, and each result is the bits it has alone (attention.h).
  for (int64_t first = 0; first < p.rows;) {
    const Segment* seg = p.seg_of[first];
    int64_t end = first;
    while (end < p.rows && p.seg_of[end] == seg) ++end;
    for (int32_t g = 0; g < c.num_kv_heads; ++g) {
      p.queries.clear();
      for (int64_t r = first; r < end; ++r) {
        for (int32_t head = g * group; head < (g + 1) * group; ++head) {
          p.queries.push_back(
              {&p.q[r * nq + head * hd], p.pos_of[r] + 1, &p.att[r * nq + head * hd]});
        }
      }
      Attend(p.queries, *seg->cache, l, g, &p.scratch);
    }
    first = end;
  }
  Linear(p.att.data(), p.rows, lin.o, p.y.data());
  for (int64_t i = 0; i < p.rows * p.h; ++i) p.x[i] += p.y[i];
  return Status::Ok();
}

void Transformer::FeedForwardLayer(int32_t l, Pass& p) const {
  const LayerLinears& lin = linears_[l];
  RmsNorm(p.x.data(), p.rows, p.h, weights_.layers[l].post_norm.data(), config_.rms_norm_eps,
          p.xn.data());
  Linear(p.xn.data(), p.rows, lin.gate, p.gate.data());
  Linear(p.xn.data(), p.rows, lin.up, p.up.data());
  for (int64_t i = 0; i < p.rows * p.ffn; ++i) {
    const float g = p.gate[i];
    p.gate[i] = g / (1.0f + std::exp(-g)) * p.up[i];
  }
  Linear(p.gate.data(), p.rows, lin.down, p.y.data());
  for (int64_t i = 0; i < p.rows * p.h; ++i) p.x[i] += p.y[i];
}

void Transformer::LastRowLogits(std::span<const Segment> segments, const Pass& p,
                                std::vector<float>* logits) const {
  const int64_t n = static_cast<int64_t>(segments.size()), h = p.h;
  std::vector<float> last(n * h), last_norm(n * h);
  int64_t r = 0;
  for (int64_t s = 0; s < n; ++s) {
    r += static_cast<int64_t>(segments[s].tokens.size());
    std::copy_n(p.x.data() + (r - 1) * h, h, last.data() + s * h);
  }
  RmsNorm(last.data(), n, h, weights_.final_norm.data(), config_.rms_norm_eps, last_norm.data());
  logits->resize(n * config_.vocab_size);
  Linear(last_norm.data(), n, head_, logits->data());
}

Status Transformer::Forward(std::span<const Segment> segments, std::vector<float>* logits,
                            const LayerReady* on_layer) const {
  Result<int64_t> rows = CheckSegments(segments);
  if (!rows.ok()) return rows.status();
  Pass p(config_, *rows);
  Embed(segments, p);
  for (int32_t l = 0; l < config_.num_layers; ++l) {
    MC_RETURN_IF_ERROR(AttentionLayer(l, p, on_layer));
    FeedForwardLayer(l, p);
  }
  LastRowLogits(segments, p, logits);  // each segment's last row only
  return Status::Ok();
}

int32_t Argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

}  // namespace mooncake::model
