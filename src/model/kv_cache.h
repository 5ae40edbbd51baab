// The KV of one sequence, in blocks of `block_tokens` tokens. A block is one float32 array laid
// out [layer][K=0, V=1][kv_head][head_dim][token in block] (token fastest): the unit the job
// stores and moves, self-contained for its tokens. Slots past the sequence's end in its last
// block are 0, so equal prefixes give equal bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"

namespace mooncake::model {

struct KvShape {
  int32_t layers = 0;
  int32_t kv_heads = 0;
  int32_t head_dim = 0;
  int32_t block_tokens = 0;

  size_t BlockFloats() const {
    return size_t(layers) * 2 * size_t(kv_heads) * size_t(head_dim) * size_t(block_tokens);
  }
  size_t BlockBytes() const { return BlockFloats() * sizeof(float); }
  // One layer's K and V of a block: contiguous, at layer x LayerFloats() in the block.
  size_t LayerFloats() const {
    return 2 * size_t(kv_heads) * size_t(head_dim) * size_t(block_tokens);
  }
  // Offset in a block of (layer, kv: 0 = K / 1 = V, kv head, dim, token in block).
  size_t Index(int32_t layer, int32_t kv, int32_t head, int32_t dim, int32_t token) const {
    return (((size_t(layer) * 2 + size_t(kv)) * size_t(kv_heads) + size_t(head)) *
                size_t(head_dim) +
            size_t(dim)) *
               size_t(block_tokens) +
           size_t(token);
  }
  friend bool operator==(const KvShape&, const KvShape&) = default;
};

// Not thread-safe; one sequence's cache is used by one thread at a time.
class KvCache {
 public:
  explicit KvCache(KvShape shape) : shape_(shape) {}

  const KvShape& shape() const { return shape_; }
  int64_t tokens() const { return tokens_; }
  size_t num_blocks() const { return blocks_.size(); }
  std::span<const float> block(size_t i) const { return blocks_[i]; }
  std::span<float> mutable_block(size_t i) { return blocks_[i]; }

  // Appends a block computed elsewhere (read back from a store) holding `tokens_in_block`
  // tokens. Only where the cache ends on a block boundary; the data must be BlockFloats() long.
  Status AppendBlock(std::span<const float> data, int32_t tokens_in_block);

  // Room for `more` further tokens (new blocks zero-filled); returns the first new position.
  int64_t Grow(int64_t more);

 private:
  KvShape shape_;
  int64_t tokens_ = 0;
  std::vector<std::vector<float>> blocks_;
};

}  // namespace mooncake::model
