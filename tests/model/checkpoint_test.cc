#include "model/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "write_safetensors.h"

namespace mooncake::model {
namespace {

using testing::F32Tensor;
using testing::RawTensor;
using testing::WriteSafetensors;
namespace fs = std::filesystem;

// The tensors of `w` under the names LlamaForCausalLM saves.
std::vector<RawTensor> HfTensors(const ModelConfig& c, const ModelWeights& w) {
  const int64_t h = c.hidden_size, q = int64_t{c.num_heads} * c.head_dim,
                kv = int64_t{c.num_kv_heads} * c.head_dim, f = c.intermediate_size;
  std::vector<RawTensor> t;
  t.push_back(F32Tensor("model.embed_tokens.weight", {c.vocab_size, h}, w.embed));
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const LayerWeights& L = w.layers[l];
    t.push_back(F32Tensor(p + "input_layernorm.weight", {h}, L.input_norm));
    t.push_back(F32Tensor(p + "self_attn.q_proj.weight", {q, h}, L.q));
    t.push_back(F32Tensor(p + "self_attn.k_proj.weight", {kv, h}, L.k));
    t.push_back(F32Tensor(p + "self_attn.v_proj.weight", {kv, h}, L.v));
    t.push_back(F32Tensor(p + "self_attn.o_proj.weight", {h, q}, L.o));
    t.push_back(F32Tensor(p + "post_attention_layernorm.weight", {h}, L.post_norm));
    t.push_back(F32Tensor(p + "mlp.gate_proj.weight", {f, h}, L.gate));
    t.push_back(F32Tensor(p + "mlp.up_proj.weight", {f, h}, L.up));
    t.push_back(F32Tensor(p + "mlp.down_proj.weight", {h, f}, L.down));
  }
  t.push_back(F32Tensor("model.norm.weight", {h}, w.final_norm));
  if (!w.lm_head.empty()) t.push_back(F32Tensor("lm_head.weight", {c.vocab_size, h}, w.lm_head));
  return t;
}

std::string ConfigJson(const ModelConfig& c, const std::string& extra = "") {
  return "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
         "\"vocab_size\": " +
         std::to_string(c.vocab_size) + ", \"hidden_size\": " + std::to_string(c.hidden_size) +
         ", \"intermediate_size\": " + std::to_string(c.intermediate_size) +
         ", \"num_hidden_layers\": " + std::to_string(c.num_layers) +
         ", \"num_attention_heads\": " + std::to_string(c.num_heads) +
         ", \"num_key_value_heads\": " + std::to_string(c.num_kv_heads) +
         ", \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, \"hidden_act\": \"silu\", "
         "\"tie_word_embeddings\": " +
         (c.tie_word_embeddings ? "true" : "false") + extra + "}";
}

fs::path FreshDir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void WriteText(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST(CheckpointTest, LoadsWhatWasWrittenInTheHfLayout) {
  for (bool tied : {false, true}) {
    ModelConfig c = *PresetConfig("tiny");
    c.tie_word_embeddings = tied;
    const ModelWeights w = SeededWeights(c, 7);
    const fs::path dir = FreshDir(tied ? "ckpt-tied" : "ckpt");
    WriteText(dir / "config.json", ConfigJson(c));
    WriteSafetensors((dir / "model.safetensors").string(), HfTensors(c, w));
    auto m = LoadModel(dir.string(), 0);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->config.tie_word_embeddings, tied);
    EXPECT_EQ(m->weights.embed, w.embed);
    EXPECT_EQ(m->weights.layers[1].down, w.layers[1].down);
    EXPECT_EQ(m->weights.lm_head, w.lm_head);
    fs::remove_all(dir);
  }
}

TEST(CheckpointTest, ReadsAShardedIndex) {
  const ModelConfig c = *PresetConfig("tiny");
  const ModelWeights w = SeededWeights(c, 3);
  const fs::path dir = FreshDir("ckpt-sharded");
  WriteText(dir / "config.json", ConfigJson(c));
  std::vector<RawTensor> all = HfTensors(c, w), first, second;
  nlohmann::json map = nlohmann::json::object();
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string file =
        i % 2 ? "model-00002-of-00002.safetensors" : "model-00001-of-00002.safetensors";
    map[all[i].name] = file;
    (i % 2 ? second : first).push_back(all[i]);
  }
  WriteSafetensors((dir / "model-00001-of-00002.safetensors").string(), first);
  WriteSafetensors((dir / "model-00002-of-00002.safetensors").string(), second);
  WriteText(dir / "model.safetensors.index.json", nlohmann::json{{"weight_map", map}}.dump());
  auto m = LoadCheckpoint(dir.string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weights.layers[0].q, w.layers[0].q);
  EXPECT_EQ(m->weights.final_norm, w.final_norm);
  fs::remove_all(dir);
}

TEST(CheckpointTest, ErrorsNameTheFileOrTheTensor) {
  const ModelConfig c = *PresetConfig("tiny");
  const fs::path dir = FreshDir("ckpt-bad");
  WriteText(dir / "config.json", ConfigJson(c));
  auto none = LoadCheckpoint(dir.string());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("model.safetensors"), std::string::npos);
  std::vector<RawTensor> tensors = HfTensors(c, SeededWeights(c, 1));
  tensors.erase(tensors.begin() + 3);  // model.layers.0.self_attn.k_proj.weight
  WriteSafetensors((dir / "model.safetensors").string(), tensors);
  auto missing = LoadCheckpoint(dir.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("model.layers.0.self_attn.k_proj.weight"),
            std::string::npos)
      << missing.status().message();
  WriteText(dir / "config.json", ConfigJson(c, ", \"rope_scaling\": {\"type\": \"linear\"}"));
  auto scaled = LoadCheckpoint(dir.string());
  ASSERT_FALSE(scaled.ok());
  EXPECT_NE(scaled.status().message().find("rope_scaling"), std::string::npos);
  fs::remove_all(dir);
  auto unknown = LoadModel("no-such-preset", 0);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("tiny, mini, small"), std::string::npos);
}

}  // namespace
}  // namespace mooncake::model
