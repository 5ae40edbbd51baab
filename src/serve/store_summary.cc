#include "serve/store_summary.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "store/node/losses.h"
#include "store/node/ssd_summary.h"

namespace mooncake::serve {
namespace {

void PrintTable(const store::StatsResponse& stats, const std::string& ssd_line,
                const std::string& run_dir, const std::string& result) {
  std::printf("\n== mooncake store service ==\n");
  std::printf(
      "%-28s %llu objects, %llu requests served, %llu replicas evicted, %llu puts "
      "revoked (%llu timed out)\n",
      "store", static_cast<unsigned long long>(stats.objects),
      static_cast<unsigned long long>(stats.requests),
      static_cast<unsigned long long>(stats.evicted_replicas),
      static_cast<unsigned long long>(stats.revoked_puts),
      static_cast<unsigned long long>(stats.timed_out_puts));
  if (!ssd_line.empty()) std::printf("%s", ssd_line.c_str());
  std::printf("%-28s %s\n", "run folder", run_dir.c_str());
  std::printf("%-28s %s\n", "result", result.c_str());
  std::fflush(stdout);
}

}  // namespace

bool WriteStoreSummary(StoreServiceNode& node, const RankReport& all,
                       const StoreSummaryInputs& in) {
  store::MasterService& master = node.master_node()->service();
  const store::StatsResponse stats = master.Stats();
  const store::MasterStats ms =
      master.WithMaster([](store::MetadataMaster& m) { return m.Stats(); });
  std::map<std::string, double> extra;
  std::string ssd_line;
  if (in.ssd) ssd_line = store::SsdSummary(*node.master_node(), all.ssd, &extra);
  store::CountLosses(ms, &extra);
  extra["when_full_keep"] = in.keep_when_full ? 1 : 0;
  const size_t dead = node.dead_ranks().size();
  const std::string result = store::ResultLine(all.errors, dead, ms, in.keep_when_full);
  nlohmann::json j = {{"mode", "store"},
                      {"ranks", in.ranks},
                      {"store_ranks", in.store_ranks},
                      {"objects", stats.objects},
                      {"requests", stats.requests},
                      {"evicted_replicas", stats.evicted_replicas},
                      {"revoked_puts", stats.revoked_puts},
                      {"timed_out_puts", stats.timed_out_puts},
                      {"rpc_refused_frames", all.rpc_refused_frames},
                      {"refused_data_messages", all.refused_data_messages},
                      {"refused_data_messages_by_peer", all.RefusalsByPeer()},
                      {"dead_ranks", dead},
                      {"errors", all.errors},
                      {"extra", extra}};
  if (const StoreServiceNode::Failover fo = node.failover(); fo.standby) {
    // takeover_ms: the old active's last heartbeat heard by the standby -> the first request the
    // new master served (null when no request came); ready_ms: -> the new master serving.
    j["failover"] = FailoverBlock(fo);
  }
  std::FILE* f = std::fopen((in.run_dir + "/summary.json").c_str(), "w");
  if (f != nullptr) {
    std::fputs((j.dump(2) + "\n").c_str(), f);
    std::fclose(f);
  }
  PrintTable(stats, ssd_line, in.run_dir, result);
  return result.rfind("LOST", 0) != 0;
}

}  // namespace mooncake::serve
