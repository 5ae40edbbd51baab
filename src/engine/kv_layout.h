// The bytes of a KV block in a live run. A block is `layers` pieces, one per model layer, each
// filled with FillBlockContent(hash id, layer, model): the real layout of a KV block, scaled down
// by kv_scale so a small machine moves real, checkable bytes (DESIGN.md "Engines").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "engine/cost_model.h"

namespace mooncake::engine {

class KvLayout {
 public:
  // Piece bytes = max(8, real block bytes x kv_scale / layers) rounded down to 8 bytes.
  KvLayout(const CostModel& cost, double kv_scale, const std::string& model_name);
  // The layout of an engine that computes its KV (reference_engine.h): blocks of `block_bytes`,
  // moved at their real size, keyed under `model_name`. Fill and Verify do not apply.
  static KvLayout Computed(uint64_t block_bytes, uint32_t layers, const std::string& model_name);

  uint64_t block_bytes() const { return piece_bytes_ * layers_; }
  uint64_t piece_bytes() const { return piece_bytes_; }
  uint32_t layers() const { return layers_; }
  // What the modelled cluster would move for this block.
  uint64_t real_block_bytes() const { return real_block_bytes_; }

  void Fill(uint64_t hash_id, std::span<std::byte> block) const;
  // True when every layer piece holds the content of (hash_id, layer).
  bool Verify(uint64_t hash_id, std::span<const std::byte> block) const;
  // The store key of a block: the model and the block's prefix hash.
  std::string Key(uint64_t hash_id) const;
  const std::string& model_name() const { return model_name_; }
  // The hash id of a Key of this model, or nullopt for any other key.
  std::optional<uint64_t> HashOfKey(const std::string& key) const;

 private:
  KvLayout(uint32_t layers, uint64_t piece_bytes, uint64_t real_block_bytes,
           const std::string& model_name);
  uint32_t layers_;
  uint64_t piece_bytes_;
  uint64_t real_block_bytes_;
  uint64_t model_tag_;
  std::string model_name_;
};

}  // namespace mooncake::engine
