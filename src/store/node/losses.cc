#include "store/node/losses.h"

namespace mooncake::store {

uint64_t CountLosses(const MasterStats& m, std::map<std::string, double>* extra) {
  auto& e = *extra;
  e["objects_lost_rank_died"] = static_cast<double>(m.objects_lost);
  e["objects_lost_evicted_unspilled"] = static_cast<double>(m.dropped_unspilled);
  e["objects_lost_ssd_lru"] = static_cast<double>(m.dropped_by_tier);
  const uint64_t lost = m.objects_lost + m.dropped_unspilled + m.dropped_by_tier;
  e["objects_lost"] = static_cast<double>(lost);
  e["puts_refused_no_space"] = static_cast<double>(m.puts_refused_no_space);
  return lost;
}

std::string ResultLine(uint64_t errors, size_t dead, const MasterStats& m, bool keep) {
  const uint64_t lost = m.objects_lost + m.dropped_unspilled + m.dropped_by_tier;
  const uint64_t policy = keep ? 0 : m.dropped_unspilled + m.dropped_by_tier;
  if (errors > 0) return "ERRORS";
  if (lost > policy) {
    return "LOST " + std::to_string(lost) + " acknowledged object(s) (summary.json objects_lost_*)";
  }
  std::string line = "OK";
  if (dead > 0) line += ", but " + std::to_string(dead) + " rank(s) were lost";
  if (policy > 0) {
    line += " (" + std::to_string(policy) + " object(s) evicted, store.when_full = evict)";
  }
  return line;
}

}  // namespace mooncake::store
