#include "model/trace_tokens.h"

#include <fmt/format.h>

namespace mooncake::model {

uint64_t SplitMix64(uint64_t state) {
  uint64_t z = state + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<int32_t> BlockTokens(BlockHash hash, int32_t length, int32_t vocab_size) {
  const uint64_t base = SplitMix64(hash.value) ^ (uint64_t(length) * 0x9E3779B97F4A7C15ull);
  std::vector<int32_t> tokens(length);
  for (int32_t j = 0; j < length; ++j) {
    tokens[j] = static_cast<int32_t>(SplitMix64(base + uint64_t(j)) % uint64_t(vocab_size));
  }
  return tokens;
}

Result<std::vector<int32_t>> PromptTokens(std::span<const BlockHash> hash_ids, int64_t input_length,
                                          int32_t block_tokens, int32_t vocab_size) {
  if (block_tokens < 1 || vocab_size < 1 || input_length < 1) {
    return InvalidArgument(fmt::format("PromptTokens: input_length {}, block_tokens {}, vocab {}",
                                       input_length, block_tokens, vocab_size));
  }
  const int64_t blocks = (input_length + block_tokens - 1) / block_tokens;
  if (static_cast<int64_t>(hash_ids.size()) != blocks) {
    return InvalidArgument(fmt::format("{} hash ids for input_length {}: blocks of {} need {}",
                                       hash_ids.size(), input_length, block_tokens, blocks));
  }
  std::vector<int32_t> tokens;
  tokens.reserve(input_length);
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t length = std::min<int64_t>(block_tokens, input_length - b * block_tokens);
    const auto block = BlockTokens(hash_ids[b], static_cast<int32_t>(length), vocab_size);
    tokens.insert(tokens.end(), block.begin(), block.end());
  }
  return tokens;
}

}  // namespace mooncake::model
