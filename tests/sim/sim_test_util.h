// Shared helpers for the simulator tests: the paper's model on 8 x A800, built in code.
#pragma once

#include <vector>

#include "../support/paper_cost_model.h"
#include "engine/cost_model.h"
#include "trace/trace_request.h"

namespace mooncake::sim::testing {

using ::mooncake::testing::Llama70bA800;

// A request with fresh (unshared) block ids starting at `first_block`.
inline trace::TraceRequest Request(uint64_t id, int64_t ts_ms, int32_t input, int32_t output,
                                   uint64_t first_block) {
  trace::TraceRequest r;
  r.id = RequestId{id};
  r.timestamp_ms = ts_ms;
  r.input_length = input;
  r.output_length = output;
  for (int i = 0; i < (input + 511) / 512; ++i) r.hash_ids.push_back(BlockHash{first_block + i});
  return r;
}

}  // namespace mooncake::sim::testing
