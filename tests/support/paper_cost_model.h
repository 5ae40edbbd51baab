// The paper's cost model (LLaMA3-70B on 8 x A800, Mooncake Table 1), built in code so tests do
// not depend on the preset files. Shared by the conductor and simulator tests.
#pragma once

#include "engine/cost_model.h"

namespace mooncake::testing {

inline engine::CostModel Llama70bA800() {
  engine::ModelSpec m{"llama3-70b", 80, 8192, 4, 22, 8, 2, 70.6e9};
  m.max_context = 131072;  // configs/models/llama3-70b.ini
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

}  // namespace mooncake::testing
