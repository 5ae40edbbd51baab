// One request of a Mooncake-format trace (one JSONL line), as read or generated.
#pragma once

#include <cstdint>
#include <vector>

#include "common/ids.h"

namespace mooncake::trace {

// Tokens per hash id in the Mooncake traces.
inline constexpr int kTraceBlockTokens = 512;

struct TraceRequest {
  RequestId id;                     // 0-based position among the requests returned (after offset)
  int64_t timestamp_ms = 0;         // arrival, ms from the trace start (non-decreasing)
  int32_t input_length = 0;         // prompt tokens
  int32_t output_length = 0;        // generated tokens
  std::vector<BlockHash> hash_ids;  // one per 512-token block; the last may be partial
  int64_t line = 0;                 // 1-based source line (0 for generated requests)
  // The prompt's tokens when a client gave them (HTTP completions); empty for trace requests,
  // whose tokens follow from hash_ids (model/trace_tokens.h).
  std::vector<int32_t> prompt_ids;
};

}  // namespace mooncake::trace
