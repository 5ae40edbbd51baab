// A model from a Hugging Face LLaMA checkpoint folder or from a preset and a seed.
#pragma once

#include <cstdint>
#include <string>

#include "model/config.h"
#include "model/weights.h"

namespace mooncake::model {

struct LoadedModel {
  ModelConfig config;
  ModelWeights weights;
};

// DIR holding config.json and model.safetensors, or model.safetensors.index.json with its
// shards (the weight_map's files, in DIR), tensors named as LlamaForCausalLM saves them.
Result<LoadedModel> LoadCheckpoint(const std::string& dir);

// `spec` is a folder (LoadCheckpoint) when one exists by that name, else a preset name whose
// weights come from `seed`. Errors name the folder, the file or the preset.
Result<LoadedModel> LoadModel(const std::string& spec, uint64_t seed);

}  // namespace mooncake::model
