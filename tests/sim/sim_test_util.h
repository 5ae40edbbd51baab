// Shared helpers for the simulator tests: the paper's model on 8 x A800, built in code.
#pragma once

#include <vector>

#include "engine/cost_model.h"
#include "trace/trace_request.h"

namespace mooncake::sim::testing {

inline engine::CostModel Llama70bA800() {
  engine::ModelSpec m{"llama3-70b", 80, 8192, 4, 22, 8, 2, 70.6e9};
  engine::HardwareSpec h;
  h.gpus = 8;
  h.peak_flops = 8 * 312e12;
  h.mfu = 0.5;
  h.hbm_bytes_per_s = 8 * 2039e9;
  h.mbu = 0.8;
  h.hbm_bytes = 8ULL * 80 * (1ULL << 30);
  h.dram_bytes = 1ULL << 40;
  h.nic_bytes_per_s = 100e9;
  return engine::CostModel(m, h);
}

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
