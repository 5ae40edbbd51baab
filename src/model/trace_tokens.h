// Token ids for trace requests, which carry block hash ids, not text (docs/MODEL.md "Tokens
// from traces"). Token j of a block with hash id h holding L tokens is
//
//   SplitMix64(SplitMix64(h) ^ (L * 0x9E3779B97F4A7C15) + j) mod vocab_size
//
// (SplitMix64 as in Vigna's splitmix64.c, one step from the given state, wrapping uint64
// arithmetic). Requests sharing leading hash ids share those blocks' tokens, so their prompts
// share a real prefix; a block's KV depends on every token before it, through the model.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/ids.h"
#include "common/status.h"

namespace mooncake::model {

uint64_t SplitMix64(uint64_t state);

// The `length` tokens (1 <= length) of block `hash`, each in [0, vocab_size).
std::vector<int32_t> BlockTokens(BlockHash hash, int32_t length, int32_t vocab_size);

// A request's prompt: blocks of `block_tokens` tokens, the last one holding the rest of
// `input_length` (a partial block gets its own tokens, as its length differs). Needs
// ceil(input_length / block_tokens) hash ids.
Result<std::vector<int32_t>> PromptTokens(std::span<const BlockHash> hash_ids, int64_t input_length,
                                          int32_t block_tokens, int32_t vocab_size);

}  // namespace mooncake::model
