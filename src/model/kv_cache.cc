#include "model/kv_cache.h"

#include <fmt/format.h>

#include <algorithm>

namespace mooncake::model {

Status KvCache::AppendBlock(std::span<const float> data, int32_t tokens_in_block) {
  if (tokens_ % shape_.block_tokens != 0) {
    return InvalidArgument(
        fmt::format("KV cache holds {} tokens, not whole blocks of {}: a block "
                    "can only be appended on a block boundary",
                    tokens_, shape_.block_tokens));
  }
  if (data.size() != shape_.BlockFloats() || tokens_in_block < 1 ||
      tokens_in_block > shape_.block_tokens) {
    return InvalidArgument(
        fmt::format("KV block of {} floats holding {} tokens: expected {} "
                    "floats and 1 to {} tokens",
                    data.size(), tokens_in_block, shape_.BlockFloats(), shape_.block_tokens));
  }
  blocks_.emplace_back(data.begin(), data.end());
  tokens_ += tokens_in_block;
  return Status::Ok();
}

int64_t KvCache::Grow(int64_t more) {
  const int64_t first = tokens_;
  tokens_ += more;
  const size_t need =
      static_cast<size_t>((tokens_ + shape_.block_tokens - 1) / shape_.block_tokens);
  while (blocks_.size() < need) blocks_.emplace_back(shape_.BlockFloats(), 0.0f);
  return first;
}

}  // namespace mooncake::model
