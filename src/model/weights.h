// A model's weights in float32, each matrix in Hugging Face's nn.Linear layout: [out, in],
// row-major (y = W x). Made from a seed, or read from a checkpoint (model/checkpoint.h).
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "model/config.h"

namespace mooncake::model {

struct LayerWeights {
  std::vector<float> input_norm;  // [hidden]
  std::vector<float> q;           // [heads x head_dim, hidden]
  std::vector<float> k;           // [kv_heads x head_dim, hidden]
  std::vector<float> v;           // [kv_heads x head_dim, hidden]
  std::vector<float> o;           // [hidden, heads x head_dim]
  std::vector<float> post_norm;   // [hidden]
  std::vector<float> gate;        // [intermediate, hidden]
  std::vector<float> up;          // [intermediate, hidden]
  std::vector<float> down;        // [hidden, intermediate]
};

struct ModelWeights {
  std::vector<float> embed;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  std::vector<float> final_norm;  // [hidden]
  std::vector<float> lm_head;     // [vocab, hidden]; empty when tied to embed
};

// Every weight holds the floats the config asks for; the error names the weight and both sizes.
Status CheckWeightSizes(const ModelConfig& config, const ModelWeights& weights);

// Weights drawn from `seed` alone (SplitMix64, uniform): the same seed gives the same bits on
// every machine. Matrices uniform in +-1/sqrt(in), embeddings in +-1, norms 1 +- 0.1.
ModelWeights SeededWeights(const ModelConfig& config, uint64_t seed);

}  // namespace mooncake::model
