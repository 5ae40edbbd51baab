// The reference decoder-only transformer with Hugging Face LlamaForCausalLM's arithmetic:
// RMSNorm (rms_norm_eps), rotary embeddings in the rotate-half layout (rope_theta), grouped-query
// attention, SwiGLU MLP, tied or untied output head; float32 throughout.
//
// Determinism (docs/MODEL.md): a token's KV and logits are the same bits whether its prefix was
// computed in one pass, in chunks, or appended from stored blocks, and whichever other sequences
// share its decode step: every per-token step sums in a fixed order, and the matmuls are
// row-independent (model/matmul.h).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "model/checkpoint.h"
#include "model/kv_cache.h"
#include "model/matmul.h"

namespace mooncake::model {

// Const methods may run on several threads at once, each with its own caches.
class Transformer {
 public:
  // Checks that every weight has the size the config asks for.
  static Result<Transformer> Create(LoadedModel model);

  const ModelConfig& config() const { return config_; }
  KvShape KvShapeFor(int32_t block_tokens) const;

  // Appends `tokens` (at least one) to `cache`, whose earlier tokens are the cached prefix, and
  // writes the logits after the last of them (vocab_size floats). The chunk's KV is in the
  // cache's blocks from the one holding the chunk's first token to the end.
  Status Prefill(std::span<const int32_t> tokens, KvCache* cache,
                 std::vector<float>* last_logits) const;
  // Called by a prefill once per layer, in order, as soon as that layer's KV of the chunk's
  // tokens is in the cache and final, before the next layer is computed (so a caller can send a
  // layer while the rest computes). An error stops the pass and is returned.
  using LayerReady = std::function<Status(int32_t layer)>;
  Status Prefill(std::span<const int32_t> tokens, KvCache* cache, std::vector<float>* last_logits,
                 const LayerReady& on_layer) const;

  // One decode step over a batch: tokens[i] is appended to caches[i] (distinct caches);
  // logits holds batch x vocab_size floats, row i for sequence i.
  Status DecodeStep(std::span<KvCache* const> caches, std::span<const int32_t> tokens,
                    std::vector<float>* logits) const;

 private:
  struct Segment {
    KvCache* cache;
    std::span<const int32_t> tokens;
  };
  // One forward pass's rows and buffers (transformer.cc): every segment's new tokens, in order.
  struct Pass;
  Transformer(ModelConfig config, ModelWeights weights);
  Status Forward(std::span<const Segment> segments, std::vector<float>* logits,
                 const LayerReady* on_layer = nullptr) const;
  // Forward's parts, in order: the inputs checked (the number of rows), the rows embedded, per
  // layer attention (which writes the layer's KV and then calls `on_layer`) and the feed-forward,
  // and the logits of each segment's last row.
  Result<int64_t> CheckSegments(std::span<const Segment> segments) const;
  void Embed(std::span<const Segment> segments, Pass& p) const;
  Status AttentionLayer(int32_t l, Pass& p, const LayerReady* on_layer) const;
  void StoreKv(int32_t l, Pass& p) const;
  void FeedForwardLayer(int32_t l, Pass& p) const;
  void LastRowLogits(std::span<const Segment> segments, const Pass& p,
                     std::vector<float>* logits) const;

  // A layer's linear weights in the kernels' layout (matmul.h).
  struct LayerLinears {
    LinearWeight q, k, v, o, gate, up, down;
  };

  ModelConfig config_;
  ModelWeights weights_;  // the embedding and the norms; the linear layers are moved to:
  std::vector<LayerLinears> linears_;
  LinearWeight head_;            // the output head, vocab outputs (its own copy when tied)
  std::vector<float> inv_freq_;  // head_dim / 2 rotary frequencies
};

// The greedy choice: the lowest index among equal maxima.
int32_t Argmax(std::span<const float> logits);

}  // namespace mooncake::model
