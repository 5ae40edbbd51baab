#include "sim/store_sim.h"

#include <algorithm>

namespace mooncake::sim {

StoreSim::StoreSim(const StoreMasterModel& model) : model_(model), master_(model.master, clock_) {
  for (int r = 0; r < model.ranks; ++r) {
    Status s = master_.AddSegment(Rank{r}, model.rank_bytes);
    (void)s;  // distinct ranks on a fresh master: cannot fail
  }
  replicate_.replicas = model.replicas;
}

void StoreSim::Keys(std::span<const BlockHash> blocks) {
  keys_.resize(blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) keys_[i] = std::to_string(blocks[i].value);
}

int StoreSim::ReadPrefix(Nanos now, std::span<const BlockHash> blocks) {
  clock_.Set(now);
  int present = 0;
  for (size_t first = 0; first < blocks.size() && present == static_cast<int>(first);
       first += kBatchKeys) {
    Keys(blocks.subspan(first, std::min(kBatchKeys, blocks.size() - first)));
    // BatchExists leases and refreshes each found block as BatchGet does, without building the
    // replica lists the simulator would not read.
    for (uint8_t found : master_.BatchExists(keys_)) {
      if (found == 0) break;
      ++present;
    }
  }
  stats_.get_hits += present;
  stats_.get_misses += blocks.size() - present;
  return present;
}

void StoreSim::Write(Nanos now, std::span<const BlockHash> blocks) {
  clock_.Set(now);
  for (size_t first = 0; first < blocks.size(); first += kBatchKeys) {
    Keys(blocks.subspan(first, std::min(kBatchKeys, blocks.size() - first)));
    sizes_.assign(keys_.size(), model_.block_bytes);
    auto started = master_.BatchPutStart(keys_, sizes_, replicate_);
    ended_.clear();
    for (size_t i = 0; i < started.size(); ++i) {
      if (started[i].ok()) {
        ended_.push_back(keys_[i]);
      } else if (started[i].status().code() == ErrorCode::kAlreadyExists ||
                 started[i].status().code() == ErrorCode::kBusy) {
        ++stats_.put_exists;
      } else {
        ++stats_.put_failures;
      }
    }
    checksums_.assign(ended_.size(), 0);
    for (const Status& s : master_.BatchPutEnd(ended_, checksums_)) {
      if (s.ok()) {
        ++stats_.puts;
      } else {
        ++stats_.put_failures;
      }
    }
  }
}

uint64_t StoreSim::used_bytes() const {
  uint64_t used = 0;
  for (int r = 0; r < model_.ranks; ++r) {
    auto s = master_.SegmentStats(Rank{r});
    if (s.ok()) used += s->used;
  }
  return used;
}

}  // namespace mooncake::sim
