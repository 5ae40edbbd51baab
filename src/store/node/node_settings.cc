#include "store/node/node_settings.h"

#include <algorithm>
#include <chrono>

namespace mooncake::store {

uint64_t WallClockVersion() {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return static_cast<uint64_t>(std::max<int64_t>(ns.count(), 1));
}

MasterNodeConfig MasterNodeConfigFrom(const StoreOptions& o, Nanos failure_timeout,
                                      Nanos phase_timeout) {
  MasterNodeConfig c;
  MasterConfig& m = c.service.master;
  m.promote_after = o.ssd ? o.promote_after : 0;
  m.lease = o.lease;
  m.first_version = WallClockVersion();  // a restart epoch (docs/STORE.md)
  m.put_timeout = o.put_timeout;
  m.when_full = o.keep_when_full ? WhenFull::kKeep : WhenFull::kEvict;
  m.suspect_for = 2 * failure_timeout;  // a dead rank is declared by then
  c.copy_timeout = phase_timeout;
  c.ssd = o.ssd;
  c.spill.max_pending_bytes = o.spill_queue;
  c.spill.batch = 64;  // smaller answers free reserved DRAM sooner
  c.spill.rpc_timeout = phase_timeout;
  return c;
}

StoreRankConfig StoreRankConfigFrom(const StoreOptions& o, const std::string& run_dir, int rank,
                                    std::string model_preset, std::string kv_layout) {
  StoreRankConfig c;
  c.ssd = o.ssd;
  const std::string base = o.ssd_dir.empty() ? run_dir + "/ssd" : o.ssd_dir;
  c.ssd_dir = base + "/rank" + std::to_string(rank);
  c.ssd_capacity = o.ssd_capacity;
  c.spill_queue = o.spill_queue;
  c.keep_when_full = o.keep_when_full;
  c.model_preset = std::move(model_preset);
  c.kv_layout = std::move(kv_layout);
  return c;
}

}  // namespace mooncake::store
