#include "model/config.h"

#include <fmt/format.h>

#include <cmath>

#include <nlohmann/json.hpp>

namespace mooncake::model {

Status ModelConfig::Validate() const {
  const std::pair<const char*, int32_t> sizes[] = {{"vocab_size", vocab_size},
                                                   {"hidden_size", hidden_size},
                                                   {"intermediate_size", intermediate_size},
                                                   {"num_hidden_layers", num_layers},
                                                   {"num_attention_heads", num_heads},
                                                   {"num_key_value_heads", num_kv_heads},
                                                   {"head_dim", head_dim}};
  for (const auto& [key, v] : sizes) {
    if (v <= 0) return InvalidArgument(fmt::format("model {}: {} = {} must be > 0", name, key, v));
  }
  if (num_heads % num_kv_heads != 0) {
    return InvalidArgument(
        fmt::format("model {}: num_attention_heads = {} is not a multiple of num_key_value_heads "
                    "= {}",
                    name, num_heads, num_kv_heads));
  }
  if (head_dim % 2 != 0) {
    return InvalidArgument(fmt::format("model {}: head_dim = {} must be even", name, head_dim));
  }
  if (!(rms_norm_eps > 0) || !(rope_theta > 0)) {
    return InvalidArgument(fmt::format("model {}: rms_norm_eps and rope_theta must be > 0", name));
  }
  return Status::Ok();
}

std::vector<float> RopeInverseFrequencies(const ModelConfig& c) {
  std::vector<float> inv_freq;
  for (int32_t i = 0; i < c.head_dim / 2; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(c.head_dim);
    inv_freq.push_back(1.0f / std::pow(static_cast<float>(c.rope_theta), exponent));
  }
  return inv_freq;
}

int64_t ModelConfig::ParameterCount() const {
  const int64_t h = hidden_size, q = int64_t{num_heads} * head_dim,
                kv = int64_t{num_kv_heads} * head_dim, ffn = intermediate_size;
  const int64_t layer = 2 * h + h * q + 2 * h * kv + q * h + 3 * h * ffn;
  return int64_t{vocab_size} * h * (tie_word_embeddings ? 1 : 2) + num_layers * layer + h;
}

namespace {

using nlohmann::json;

Status ReadInt(const json& j, const char* key, std::string_view source, bool required,
               int32_t* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return InvalidArgument(fmt::format("{}: key '{}' is missing", source, key));
    return Status::Ok();
  }
  const json* v = &*it;
  if (v->is_array() && !v->empty()) v = &(*v)[0];  // eos_token_id may be a list: the first
  if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > INT32_MAX) {
    return InvalidArgument(fmt::format("{}: '{}' = {} is not a count", source, key, it->dump()));
  }
  *out = static_cast<int32_t>(v->get<int64_t>());
  return Status::Ok();
}

Status ReadDouble(const json& j, const char* key, std::string_view source, double* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_number()) {
    return InvalidArgument(fmt::format("{}: '{}' = {} is not a number", source, key, it->dump()));
  }
  *out = it->get<double>();
  return Status::Ok();
}

}  // namespace

Result<ModelConfig> ParseHfConfig(std::string_view json_text, std::string_view source) {
  json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument(fmt::format("{}: not a JSON object", source));
  }
  if (auto t = j.find("model_type"); t != j.end() && *t != "llama") {
    return NotSupported(
        fmt::format("{}: model_type {} (only llama is supported)", source, t->dump()));
  }
  if (auto a = j.find("hidden_act"); a != j.end() && *a != "silu") {
    return NotSupported(fmt::format("{}: hidden_act {} (only silu)", source, a->dump()));
  }
  for (const char* key : {"attention_bias", "mlp_bias"}) {
    if (auto b = j.find(key); b != j.end() && *b == true) {
      return NotSupported(fmt::format("{}: {} = true (biases are not supported)", source, key));
    }
  }
  if (auto r = j.find("rope_scaling"); r != j.end() && !r->is_null()) {
    return NotSupported(fmt::format("{}: rope_scaling {} (not supported)", source, r->dump()));
  }
  ModelConfig c;
  c.name = std::string(source);
  MC_RETURN_IF_ERROR(ReadInt(j, "vocab_size", source, true, &c.vocab_size));
  MC_RETURN_IF_ERROR(ReadInt(j, "hidden_size", source, true, &c.hidden_size));
  MC_RETURN_IF_ERROR(ReadInt(j, "intermediate_size", source, true, &c.intermediate_size));
  MC_RETURN_IF_ERROR(ReadInt(j, "num_hidden_layers", source, true, &c.num_layers));
  MC_RETURN_IF_ERROR(ReadInt(j, "num_attention_heads", source, true, &c.num_heads));
  c.num_kv_heads = c.num_heads;
  MC_RETURN_IF_ERROR(ReadInt(j, "num_key_value_heads", source, false, &c.num_kv_heads));
  c.head_dim = c.num_heads > 0 ? c.hidden_size / c.num_heads : 0;
  MC_RETURN_IF_ERROR(ReadInt(j, "head_dim", source, false, &c.head_dim));
  MC_RETURN_IF_ERROR(ReadDouble(j, "rms_norm_eps", source, &c.rms_norm_eps));
  MC_RETURN_IF_ERROR(ReadDouble(j, "rope_theta", source, &c.rope_theta));
  MC_RETURN_IF_ERROR(ReadInt(j, "bos_token_id", source, false, &c.bos_token_id));
  MC_RETURN_IF_ERROR(ReadInt(j, "eos_token_id", source, false, &c.eos_token_id));
  if (auto t = j.find("tie_word_embeddings"); t != j.end() && t->is_boolean()) {
    c.tie_word_embeddings = t->get<bool>();
  }
  MC_RETURN_IF_ERROR(c.Validate());
  return c;
}

namespace {

ModelConfig Preset(const char* name, int32_t vocab, int32_t hidden, int32_t ffn, int32_t layers,
                   int32_t heads, int32_t kv_heads) {
  return ModelConfig{.name = name,
                     .vocab_size = vocab,
                     .hidden_size = hidden,
                     .intermediate_size = ffn,
                     .num_layers = layers,
                     .num_heads = heads,
                     .num_kv_heads = kv_heads,
                     .head_dim = hidden / heads};
}

}  // namespace

std::vector<std::string> PresetNames() { return {"tiny", "mini", "small"}; }

Result<ModelConfig> PresetConfig(std::string_view name) {
  // Sizes in the LLaMA proportions (ffn about 2.7 x hidden, half as many kv heads as heads),
  // small enough to run on one CPU core: tiny for unit tests, small for measurements.
  if (name == "tiny") return Preset("tiny", 512, 64, 176, 2, 4, 2);
  if (name == "mini") return Preset("mini", 2048, 256, 688, 4, 8, 4);
  if (name == "small") return Preset("small", 8192, 512, 1408, 8, 8, 4);
  return NotFound(fmt::format("no model preset '{}' (presets: tiny, mini, small)", name));
}

}  // namespace mooncake::model
