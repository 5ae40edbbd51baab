#include "model/checkpoint.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/safetensors.h"

namespace mooncake::model {

namespace {

namespace fs = std::filesystem;

Result<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return NotFound(fmt::format("{}: cannot open", path.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Which file holds each tensor: one model.safetensors, or the shards of an index.
class TensorSource {
 public:
  static Result<TensorSource> Open(const fs::path& dir) {
    TensorSource s;
    const fs::path single = dir / "model.safetensors", index = dir / "model.safetensors.index.json";
    std::error_code ec;
    if (fs::exists(single, ec)) {
      auto f = SafetensorsFile::Open(single.string());
      if (!f.ok()) return f.status();
      s.files_.push_back(std::make_unique<SafetensorsFile>(std::move(*f)));
      for (const auto& [name, _] : s.files_[0]->tensors()) s.where_[name] = 0;
      return s;
    }
    if (!fs::exists(index, ec)) {
      return NotFound(fmt::format("{}: neither model.safetensors nor model.safetensors.index.json",
                                  dir.string()));
    }
    auto text = ReadText(index);
    if (!text.ok()) return text.status();
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    const auto map = j.is_object() ? j.find("weight_map") : j.end();
    if (map == j.end() || !map->is_object()) {
      return Corrupt(fmt::format("{}: no weight_map object", index.string()));
    }
    std::map<std::string, size_t> shard_of_file;
    for (const auto& [name, file] : map->items()) {
      const std::string f = file.is_string() ? file.get<std::string>() : "";
      if (f.empty() || f.find('/') != std::string::npos || f == "..") {
        return Corrupt(fmt::format("{}: tensor '{}' maps to {}, not a file name in the folder",
                                   index.string(), name, file.dump()));
      }
      auto [it, fresh] = shard_of_file.emplace(f, s.files_.size());
      if (fresh) {
        auto shard = SafetensorsFile::Open((dir / f).string());
        if (!shard.ok()) return shard.status();
        s.files_.push_back(std::make_unique<SafetensorsFile>(std::move(*shard)));
      }
      s.where_[name] = it->second;
    }
    return s;
  }

  bool Has(const std::string& name) const { return where_.count(name) > 0; }

  Status Read(const std::string& name, std::vector<int64_t> shape, std::vector<float>* out) const {
    const auto it = where_.find(name);
    if (it == where_.end()) return NotFound(fmt::format("checkpoint: no tensor '{}'", name));
    auto t = files_[it->second]->ReadFloats(name, shape);
    if (!t.ok()) return t.status();
    *out = std::move(*t);
    return Status::Ok();
  }

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, size_t> where_;
};

}  // namespace

Result<LoadedModel> LoadCheckpoint(const std::string& dir) {
  const fs::path root(dir);
  auto text = ReadText(root / "config.json");
  if (!text.ok()) return text.status();
  auto config = ParseHfConfig(*text, (root / "config.json").string());
  if (!config.ok()) return config.status();
  LoadedModel m;
  m.config = *config;
  m.config.name = dir;
  auto source = TensorSource::Open(root);
  if (!source.ok()) return source.status();
  const ModelConfig& c = m.config;
  const int64_t h = c.hidden_size, q = int64_t{c.num_heads} * c.head_dim,
                kv = int64_t{c.num_kv_heads} * c.head_dim, ffn = c.intermediate_size,
                vocab = c.vocab_size;
  ModelWeights& w = m.weights;
  MC_RETURN_IF_ERROR(source->Read("model.embed_tokens.weight", {vocab, h}, &w.embed));
  w.layers.resize(c.num_layers);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    LayerWeights& L = w.layers[l];
    MC_RETURN_IF_ERROR(source->Read(p + "input_layernorm.weight", {h}, &L.input_norm));
    MC_RETURN_IF_ERROR(source->Read(p + "self_attn.q_proj.weight", {q, h}, &L.q));
    MC_RETURN_IF_ERROR(source->Read(p + "self_attn.k_proj.weight", {kv, h}, &L.k));
    MC_RETURN_IF_ERROR(source->Read(p + "self_attn.v_proj.weight", {kv, h}, &L.v));
    MC_RETURN_IF_ERROR(source->Read(p + "self_attn.o_proj.weight", {h, q}, &L.o));
    MC_RETURN_IF_ERROR(source->Read(p + "post_attention_layernorm.weight", {h}, &L.post_norm));
    MC_RETURN_IF_ERROR(source->Read(p + "mlp.gate_proj.weight", {ffn, h}, &L.gate));
    MC_RETURN_IF_ERROR(source->Read(p + "mlp.up_proj.weight", {ffn, h}, &L.up));
    MC_RETURN_IF_ERROR(source->Read(p + "mlp.down_proj.weight", {h, ffn}, &L.down));
  }
  MC_RETURN_IF_ERROR(source->Read("model.norm.weight", {h}, &w.final_norm));
  // A tied model may still save lm_head.weight (a copy of the embedding): it is not read.
  if (!c.tie_word_embeddings) {
    MC_RETURN_IF_ERROR(source->Read("lm_head.weight", {vocab, h}, &w.lm_head));
  }
  return m;
}

Result<LoadedModel> LoadModel(const std::string& spec, uint64_t seed) {
  std::error_code ec;
  if (fs::is_directory(spec, ec)) return LoadCheckpoint(spec);
  auto preset = PresetConfig(spec);
  if (!preset.ok()) {
    return NotFound(
        fmt::format("model '{}': not a folder, and {}", spec, preset.status().message()));
  }
  LoadedModel m;
  m.config = *preset;
  m.weights = SeededWeights(m.config, seed);
  return m;
}

}  // namespace mooncake::model
