// Real bytes for KV blocks: a block's content is a deterministic function of
// (hash id, layer, model tag), so any rank can regenerate and check what it read without having
// seen the writer (DESIGN.md "A request, end to end").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace mooncake {

struct BlockContentKey {
  uint64_t hash_id = 0;
  uint32_t layer = 0;
  uint64_t model_tag = 0;  // e.g. a hash of the model preset name
};

// Fills `out` with the content of the block. Fast (one 64-bit mix per 8 bytes).
void FillBlockContent(const BlockContentKey& key, std::span<std::byte> out);

// True when `data` equals what FillBlockContent would write for `key`.
bool VerifyBlockContent(const BlockContentKey& key, std::span<const std::byte> data);

// The generator's seed for `key`: 64-bit word i of a block is SplitMix64(seed + i). Exposed so
// a device kernel (src/gpu) can generate the same bytes where the KV lives.
uint64_t BlockContentSeed(const BlockContentKey& key);

// Stable 64-bit tag of a model name, for BlockContentKey::model_tag.
uint64_t ModelTag(const char* model_name);

}  // namespace mooncake
