// LLaMA3-70B on 8 x A800 (Table 1), built in code so tests do not depend on preset files.
#pragma once

#include "../support/paper_cost_model.h"
#include "engine/cost_model.h"

namespace mooncake::conductor::testing {

using ::mooncake::testing::Llama70bA800;

inline std::vector<BlockHash> Range(uint64_t first, int n) {
  std::vector<BlockHash> v;
  for (int i = 0; i < n; ++i) v.push_back(BlockHash{first + static_cast<uint64_t>(i)});
  return v;
}

}  // namespace mooncake::conductor::testing
