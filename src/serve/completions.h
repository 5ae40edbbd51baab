// The OpenAI-compatible completions request (POST /v1/completions) as the serving job takes it:
// parsing and checking the JSON body, the prompt's block hash ids, and the response bodies.
// Only token-id prompts are taken (no tokenizer); temperature 0 (greedy) only; n = 1.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/status.h"

namespace mooncake::serve {

struct CompletionLimits {
  int32_t vocab_size = 0;            // token ids must be below it (0: not checked)
  int64_t max_prompt_tokens = 8192;  // the longest prompt taken
  int64_t max_tokens = 4096;         // the most tokens a request may ask for
  int64_t default_max_tokens = 16;   // OpenAI's default for max_tokens
};

struct CompletionRequest {
  std::string model;
  std::vector<int32_t> prompt_ids;
  int32_t max_tokens = 16;
  bool stream = false;
  bool ignore_eos = false;
};

// The body checked field by field; InvalidArgument names the field and what is wrong.
Result<CompletionRequest> ParseCompletionRequest(const std::string& body,
                                                 const CompletionLimits& limits);

// One hash id per `block_tokens` tokens of the prompt (the last block may be partial): each
// hashes the block's tokens and length chained on the hash of the blocks before it, so prompts
// that share a prefix share its blocks (the prefix cache reuses them) and any other content
// differs. The top bit is set, which the trace's hash ids (small integers) never have.
std::vector<BlockHash> PromptBlockHashes(std::span<const int32_t> prompt_ids, int block_tokens);

// The generated tokens a client gets: cut after the first end-of-sequence token unless
// `ignore_eos` (the decode rank generates max_tokens regardless).
std::vector<int32_t> ClientTokens(const std::vector<int32_t>& output_ids, bool ignore_eos,
                                  int32_t eos_token_id, std::string* finish_reason);

// An OpenAI-style error body: {"error": {"message", "type", "code"}}.
std::string ErrorBody(const std::string& message, const std::string& type, int code);

}  // namespace mooncake::serve
