// LLaMA3-70B on 8 x A800 (Table 1), built in code so tests do not depend on preset files.
#pragma once

#include "engine/cost_model.h"

namespace mooncake::conductor::testing {

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

inline std::vector<BlockHash> Range(uint64_t first, int n) {
  std::vector<BlockHash> v;
  for (int i = 0; i < n; ++i) v.push_back(BlockHash{first + static_cast<uint64_t>(i)});
  return v;
}

}  // namespace mooncake::conductor::testing
