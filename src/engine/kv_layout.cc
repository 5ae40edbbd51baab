#include "engine/kv_layout.h"

#include <algorithm>
#include <charconv>

#include "common/block_content.h"

namespace mooncake::engine {

KvLayout::KvLayout(const CostModel& cost, double kv_scale, const std::string& model_name)
    : layers_(static_cast<uint32_t>(std::max(1, cost.model().layers))),
      piece_bytes_(ScaledKvPieceBytes(cost, kv_scale)),
      real_block_bytes_(cost.KvBytesPerBlock()),
      model_tag_(ModelTag(model_name.c_str())),
      model_name_(model_name) {}

KvLayout::KvLayout(uint32_t layers, uint64_t piece_bytes, uint64_t real_block_bytes,
                   const std::string& model_name)
    : layers_(layers),
      piece_bytes_(piece_bytes),
      real_block_bytes_(real_block_bytes),
      model_tag_(ModelTag(model_name.c_str())),
      model_name_(model_name) {}

KvLayout KvLayout::Computed(uint64_t block_bytes, uint32_t layers, const std::string& model_name) {
  // One piece per layer, as a modelled block: the layers' KV are contiguous in a block.
  return KvLayout(std::max(1u, layers), block_bytes / std::max(1u, layers), block_bytes,
                  model_name);
}

void KvLayout::Fill(uint64_t hash_id, std::span<std::byte> block) const {
  for (uint32_t l = 0; l < layers_; ++l) {
    FillBlockContent({hash_id, l, model_tag_}, block.subspan(l * piece_bytes_, piece_bytes_));
  }
}

bool KvLayout::Verify(uint64_t hash_id, std::span<const std::byte> block) const {
  if (block.size() < block_bytes()) return false;
  for (uint32_t l = 0; l < layers_; ++l) {
    if (!VerifyBlockContent({hash_id, l, model_tag_},
                            block.subspan(l * piece_bytes_, piece_bytes_))) {
      return false;
    }
  }
  return true;
}

std::string KvLayout::Key(uint64_t hash_id) const {
  return model_name_ + "/" + std::to_string(hash_id);
}

std::optional<uint64_t> KvLayout::HashOfKey(const std::string& key) const {
  const std::string prefix = model_name_ + "/";
  if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  uint64_t id = 0;
  const char* first = key.data() + prefix.size();
  const char* last = key.data() + key.size();
  auto [end, ec] = std::from_chars(first, last, id);
  if (ec != std::errc() || end != last) return std::nullopt;
  return id;
}

}  // namespace mooncake::engine
