// Greedy generation of one prompt in one process, no cache sharing: the reference output that a
// disaggregated run must reproduce token for token.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/transformer.h"

namespace mooncake::model {

struct GenerateOptions {
  int64_t max_tokens = 0;    // exactly this many, unless stop_at_eos ends it sooner
  bool stop_at_eos = false;  // end after the config's eos_token_id (which is kept in the output)
  int32_t block_tokens = 16;
};

struct Generation {
  std::vector<int32_t> output_ids;
  std::vector<float> prompt_logits;  // after the last prompt token (which chose output_ids[0])
};

// The prompt is used exactly as given (no BOS is added).
Result<Generation> Generate(const Transformer& model, std::span<const int32_t> prompt,
                            const GenerateOptions& options);

}  // namespace mooncake::model
