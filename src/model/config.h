// The shape of a decoder-only LLaMA-family model, as Hugging Face transformers' LlamaConfig
// names it, and the seeded presets (docs/MODEL.md "Presets").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace mooncake::model {

struct ModelConfig {
  std::string name;  // the preset's name or the checkpoint folder
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t intermediate_size = 0;
  int32_t num_layers = 0;    // num_hidden_layers
  int32_t num_heads = 0;     // num_attention_heads
  int32_t num_kv_heads = 0;  // num_key_value_heads (grouped-query attention)
  int32_t head_dim = 0;      // hidden_size / num_heads unless config.json says otherwise
  double rms_norm_eps = 1e-5;
  double rope_theta = 10000.0;
  bool tie_word_embeddings = false;
  int32_t bos_token_id = 1;
  int32_t eos_token_id = 2;

  // Every size positive, heads a multiple of kv heads, head_dim even (rotate-half RoPE).
  Status Validate() const;
  int64_t ParameterCount() const;
};

// The rotary embedding's head_dim / 2 inverse frequencies as transformers computes them, in
// float32: 1 / theta^(2i / head_dim).
std::vector<float> RopeInverseFrequencies(const ModelConfig& config);

// Reads a Hugging Face config.json of a LlamaForCausalLM. Refuses what this model does not
// compute (rope_scaling, attention or MLP biases, an activation other than silu), naming the key.
// `source` names the file in errors.
Result<ModelConfig> ParseHfConfig(std::string_view json_text, std::string_view source);

// tiny, mini, small (docs/MODEL.md lists their sizes); kNotFound for another name.
Result<ModelConfig> PresetConfig(std::string_view name);
std::vector<std::string> PresetNames();

}  // namespace mooncake::model
