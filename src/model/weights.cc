#include "model/weights.h"

#include <fmt/format.h>

#include <cmath>

namespace mooncake::model {

namespace {

Status CheckSize(const std::vector<float>& w, size_t want, const char* what) {
  if (w.size() == want) return Status::Ok();
  return InvalidArgument(
      fmt::format("weight {} holds {} floats, the config needs {}", what, w.size(), want));
}

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1): 24 random bits, exact in float.
  float Symmetric() { return static_cast<float>(Next() >> 40) * (2.0f / 16777216.0f) - 1.0f; }

 private:
  uint64_t state_;
};

std::vector<float> Uniform(SplitMix64& rng, size_t n, float scale) {
  std::vector<float> w(n);
  for (float& x : w) x = rng.Symmetric() * scale;
  return w;
}

std::vector<float> Norm(SplitMix64& rng, size_t n) {
  std::vector<float> w(n);
  for (float& x : w) x = 1.0f + 0.1f * rng.Symmetric();
  return w;
}

}  // namespace

ModelWeights SeededWeights(const ModelConfig& c, uint64_t seed) {
  SplitMix64 rng(seed ^ 0x6d6f6f6e63616b65ull);  // "mooncake": seed 0 is not an all-zero state
  const size_t h = c.hidden_size, q = size_t(c.num_heads) * c.head_dim,
               kv = size_t(c.num_kv_heads) * c.head_dim, ffn = c.intermediate_size;
  const auto scale = [](size_t in) { return 1.0f / std::sqrt(static_cast<float>(in)); };
  ModelWeights w;
  w.embed = Uniform(rng, size_t(c.vocab_size) * h, 1.0f);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    LayerWeights L;
    L.input_norm = Norm(rng, h);
    L.q = Uniform(rng, q * h, scale(h));
    L.k = Uniform(rng, kv * h, scale(h));
    L.v = Uniform(rng, kv * h, scale(h));
    L.o = Uniform(rng, h * q, scale(q));
    L.post_norm = Norm(rng, h);
    L.gate = Uniform(rng, ffn * h, scale(h));
    L.up = Uniform(rng, ffn * h, scale(h));
    L.down = Uniform(rng, h * ffn, scale(ffn));
    w.layers.push_back(std::move(L));
  }
  w.final_norm = Norm(rng, h);
  if (!c.tie_word_embeddings) w.lm_head = Uniform(rng, size_t(c.vocab_size) * h, scale(h));
  return w;
}

Status CheckWeightSizes(const ModelConfig& c, const ModelWeights& w) {
  const size_t h = c.hidden_size, q = size_t(c.num_heads) * c.head_dim,
               kv = size_t(c.num_kv_heads) * c.head_dim, ffn = c.intermediate_size,
               vocab = c.vocab_size;
  MC_RETURN_IF_ERROR(CheckSize(w.embed, vocab * h, "embed"));
  MC_RETURN_IF_ERROR(CheckSize(w.final_norm, h, "final_norm"));
  if (!c.tie_word_embeddings) MC_RETURN_IF_ERROR(CheckSize(w.lm_head, vocab * h, "lm_head"));
  if (w.layers.size() != size_t(c.num_layers)) {
    return InvalidArgument(
        fmt::format("{} layers of weights, the config has {}", w.layers.size(), c.num_layers));
  }
  for (const LayerWeights& L : w.layers) {
    MC_RETURN_IF_ERROR(CheckSize(L.input_norm, h, "input_norm"));
    MC_RETURN_IF_ERROR(CheckSize(L.q, q * h, "q"));
    MC_RETURN_IF_ERROR(CheckSize(L.k, kv * h, "k"));
    MC_RETURN_IF_ERROR(CheckSize(L.v, kv * h, "v"));
    MC_RETURN_IF_ERROR(CheckSize(L.o, h * q, "o"));
    MC_RETURN_IF_ERROR(CheckSize(L.post_norm, h, "post_norm"));
    MC_RETURN_IF_ERROR(CheckSize(L.gate, ffn * h, "gate"));
    MC_RETURN_IF_ERROR(CheckSize(L.up, ffn * h, "up"));
    MC_RETURN_IF_ERROR(CheckSize(L.down, h * ffn, "down"));
  }
  return Status::Ok();
}

}  // namespace mooncake::model
