// What each serving rank reports when the job ends: its errors and its decode / prefill counters.
// The conductor sums them into the summary.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace mooncake::serve {

struct RankReport {
  uint64_t errors = 0, blocks_verified = 0, blocks_corrupt = 0, tokens = 0, max_batch = 0;
  uint64_t store_put_failures = 0;
  uint64_t peer_loss_aborts = 0;  // work dropped because a peer was declared dead
  std::vector<uint64_t> ssd;      // a store rank's SSD tier counters (store.ssd = on), summed
  std::string first_error;

  // Adds `other`'s counters; keeps the first error seen.
  void Add(const RankReport& other);
  void AddError(const std::string& message);

  std::vector<std::byte> Encode() const;
  static Result<RankReport> Decode(std::span<const std::byte> bytes);
};

}  // namespace mooncake::serve
