#include "serve/summary.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/log.h"
#include "common/units.h"
#include "trace/run_report.h"

namespace mooncake::serve {
namespace {

using ull = unsigned long long;

// Blocks that failed verification at a decode rank. Each is counted twice over: in the
// KvArrived the conductor summed and in the decode rank's final report. The larger of the two
// (a rank that died sent no report; a KvArrived that never arrived is in the report).
uint64_t ChecksumFailures(const ConductorTotals& totals, const RankReport& all) {
  return std::max(totals.blocks_corrupt, all.blocks_corrupt);
}

// summary.json's counters of the live job, beside the request metrics.
void AddCounters(const ServeContext& ctx, const ConductorTotals& totals, const RankReport& all,
                 const store::StatsResponse& st, const store::MasterStats& ms,
                 const SummaryInputs& in, trace::Summary* s) {
  auto& e = s->extra;
  e["kv_blocks_verified_at_decode"] = static_cast<double>(totals.blocks_verified);
  e["kv_checksum_failures"] = static_cast<double>(ChecksumFailures(totals, all));
  e["kv_block_bytes_moved"] = static_cast<double>(ctx.layout.block_bytes());
  e["kv_block_bytes_modelled"] = static_cast<double>(ctx.layout.real_block_bytes());
  e["kv_scale"] = in.kv_scale;
  e["time_scale"] = ctx.config.time_scale;
  e["prefix_blocks_loaded_from_store"] = static_cast<double>(totals.blocks_loaded);
  e["prefix_blocks_missing_in_store"] = static_cast<double>(totals.blocks_missing);
  e["bytes_store_read"] = static_cast<double>(totals.bytes_loaded);
  e["bytes_store_written"] = static_cast<double>(totals.bytes_stored);
  e["bytes_prefill_to_decode"] = static_cast<double>(totals.bytes_to_decode);
  e["store_objects"] = static_cast<double>(st.objects);
  e["store_pending_puts_high_water"] = static_cast<double>(ms.in_flight_puts_high_water);
  e["store_evicted_replicas"] = static_cast<double>(st.evicted_replicas);
  e["store_put_failures"] = static_cast<double>(all.store_put_failures);
  e["store_objects_rereplicated"] = static_cast<double>(ms.rereplicated);
  e["store_objects_lost"] = static_cast<double>(ms.objects_lost);
  // A KV cache (store.when_full = evict): blocks its LRU dropped, counted by cause (prefills
  // recompute them); 0 under keep.
  e["store_objects_evicted_unspilled"] = static_cast<double>(ms.dropped_unspilled);
  e["store_objects_dropped_by_ssd_lru"] = static_cast<double>(ms.dropped_by_tier);
  e["store_ranks_removed"] = static_cast<double>(ms.removed_ranks);
  e["trace_lines_skipped"] = static_cast<double>(in.workload->stats.skipped);
  e["rank_errors"] = static_cast<double>(all.errors);
  e["dispatch_failures"] = static_cast<double>(totals.dispatch_failures);
  e["requests_redispatched"] = static_cast<double>(totals.redispatched);
  e["requests_redispatched_at_takeover"] = static_cast<double>(totals.takeover_redispatched);
  e["stale_reports"] = static_cast<double>(totals.stale_reports);
  e["peer_loss_aborts"] = static_cast<double>(all.peer_loss_aborts);
  e["rpc_refused_frames"] = static_cast<double>(all.rpc_refused_frames);
  e["refused_data_messages"] = static_cast<double>(all.refused_data_messages);
  s->refused_data_messages_by_peer = all.RefusalsByPeer();
  e["scheduler_fetches"] = static_cast<double>(totals.scheduler_fetches);
  e["scheduler_fetched_blocks"] = static_cast<double>(totals.scheduler_fetched_blocks);
  static const char* kParts[RankReport::kServeParts] = {"conductor", "store", "prefill", "decode"};
  for (size_t i = 0; i < all.peak_rss_bytes.size() && i < RankReport::kServeParts; ++i) {
    e[std::string("peak_rss_") + kParts[i] + "_bytes"] = static_cast<double>(all.peak_rss_bytes[i]);
  }
  e["prefill_staging_high_water_bytes"] = static_cast<double>(all.prefill_staging_high_water);
  e["prefill_staging_retired_bytes"] = static_cast<double>(all.prefill_staging_retired);
  e["decode_waiting_high_water"] = static_cast<double>(all.decode_waiting_high_water);
  e["open_requests_high_water"] = static_cast<double>(totals.open_requests_high_water);
  for (const auto& [k, v] : in.ssd_extra) e[k] = v;
  for (const auto& [k, v] : in.extra) e[k] = v;
  if (in.tokens) {
    e["requests_token_checked"] = static_cast<double>(in.tokens->requests_compared);
    e["token_mismatches"] = static_cast<double>(in.tokens->token_mismatches);
  }
}

void PrintDead(const std::vector<trace::RankLoss>& dead) {
  for (const auto& d : dead) {
    std::printf("%-28s rank %d, %.2f s after the replay started: %s\n", "DEAD RANK", d.rank,
                d.after_s, d.why.c_str());
  }
}

void PrintLost(const std::vector<uint64_t>& lost) {
  if (lost.empty()) return;
  std::string ids;
  for (size_t i = 0; i < lost.size() && i < 20; ++i) {
    ids += (i ? ", " : "") + std::to_string(lost[i]);
  }
  if (lost.size() > 20) ids += ", ...";
  std::printf("%-28s %zu requests lost (not finished by the deadline): %s\n", "LOST", lost.size(),
              ids.c_str());
}

// The stdout table after the request metrics.
void PrintTable(const ServeContext& ctx, const ConductorTotals& totals, const RankReport& all,
                const SummaryInputs& in, const trace::Summary& summary) {
  const Workload& w = *in.workload;
  std::printf("\n== mooncake summary ==\n");
  std::printf("%-28s %s\n", "workload", w.source.c_str());
  if (w.stats.skipped > 0) {
    std::printf("%-28s %llu invalid trace lines skipped\n", "trace",
                static_cast<ull>(w.stats.skipped));
  }
  std::printf("%-28s %s, policy %s, time scale %.3g\n", "ranks", in.ranks.c_str(),
              conductor::PrefillPolicyName(in.policy), ctx.config.time_scale);
  std::printf("%s", trace::SummaryTable(summary).c_str());
  std::printf(
      "%-28s %llu verified at decode, %llu checksum failures (%s per block moved, %s modelled)\n",
      "kv blocks", static_cast<ull>(totals.blocks_verified),
      static_cast<ull>(ChecksumFailures(totals, all)),
      FormatBytes(ctx.layout.block_bytes()).c_str(),
      FormatBytes(ctx.layout.real_block_bytes()).c_str());
  std::printf(
      "%-28s %llu prefix blocks read from the store, %llu missing there (recomputed); "
      "%s written\n",
      "store", static_cast<ull>(totals.blocks_loaded), static_cast<ull>(totals.blocks_missing),
      FormatBytes(totals.bytes_stored).c_str());
  std::printf("%s", in.ssd_line.c_str());
  if (in.tokens) {
    std::printf(
        "%-28s %llu requests compared with the reference, %llu differ%s%s\n", "tokens",
        static_cast<ull>(in.tokens->requests_compared),
        static_cast<ull>(in.tokens->token_mismatches),
        in.tokens->first_mismatch.empty() ? "" : "; first: ", in.tokens->first_mismatch.c_str());
  }
  if (!in.dead.empty()) {
    std::printf(
        "%-28s %.0f objects re-replicated, %.0f lost with every replica; %llu requests "
        "re-dispatched\n",
        "after rank loss", summary.extra.at("store_objects_rereplicated"),
        summary.extra.at("store_objects_lost"), static_cast<ull>(totals.redispatched));
  }
  if (in.measured_compute) {
    std::printf(
        "%-28s compute and transfers measured (the reference engine, real time; matmul %s)\n",
        "clocks", in.matmul_backend.c_str());
  } else {
    std::printf(
        "%-28s compute slept (exact); transfers paced to the modelled NIC rate (%.0f Gbps)\n",
        "clocks", ctx.cost.hardware().nic_bytes_per_s * 8 / 1e9);
  }
}

// summary.json's `failover` block (a job with a standby conductor; docs/FAULTS.md): added to
// the file trace::WriteRunFolder wrote. takeover_ms: the old active's last heartbeat heard by
// the standby -> the new conductor's first decision (null when it made none).
void AddFailoverBlock(const ServeNode::Failover& fo, const std::string& run_dir) {
  const std::string path = run_dir + "/summary.json";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) {
    log::Warn("{}: cannot add the failover block (not JSON)", path);
    return;
  }
  j["failover"] = FailoverBlock(fo);
  std::ofstream(path) << j.dump(2) << "\n";
}

}  // namespace

int WriteServeSummary(ServeNode& node, const RankReport& all, const SummaryInputs& in) {
  const ServeContext& ctx = node.context();
  ConductorRole& conductor = *node.conductor_role();
  const auto& records = conductor.records();
  trace::Summary summary = trace::Summarize(records, ctx.config.thresholds);
  const ConductorTotals totals = conductor.totals();
  const store::MasterStats ms =
      node.master()->WithMaster([](store::MetadataMaster& m) { return m.Stats(); });
  AddCounters(ctx, totals, all, node.master()->Stats(), ms, in, &summary);
  for (const DeadRank& d : in.dead) {
    const double after = static_cast<double>((d.when - conductor.start_wall()).count()) / 1e9;
    summary.dead_ranks.push_back(trace::RankLoss{d.rank.value, after, d.why});
  }
  if (!in.run_dir.empty()) {
    Status s = trace::WriteRunFolder(in.run_dir, records, summary);
    if (!s.ok()) log::Error("{}", s.ToString());
    if (const ServeNode::Failover fo = node.failover(); s.ok() && fo.standby) {
      AddFailoverBlock(fo, in.run_dir);
    }
  }
  PrintTable(ctx, totals, all, in, summary);
  const auto lost = conductor.LostRequests();
  PrintLost(lost);
  PrintDead(summary.dead_ranks);
  if (all.errors > 0) {
    std::printf("%-28s %llu, first: %s\n", "errors", static_cast<ull>(all.errors),
                all.first_error.c_str());
  }
  if (const ServeNode::Failover fo = node.failover(); fo.took_over) {
    std::printf(
        "%-28s rank %d took over from rank %d: first decision %.0f ms after its last heartbeat, "
        "%llu requests re-dispatched\n",
        "failover", node.context().peers.self.value, fo.old_conductor, fo.takeover_ms,
        static_cast<ull>(fo.requests_redispatched));
  }
  if (!in.run_dir.empty()) std::printf("%-28s %s\n", "run folder", in.run_dir.c_str());
  const bool ok = lost.empty() && summary.failed == 0 && totals.blocks_corrupt == 0 &&
                  all.blocks_corrupt == 0 && (!in.tokens || in.tokens->token_mismatches == 0);
  std::printf("%-28s %s\n", "result", ok ? "OK" : "FAILED");
  std::fflush(stdout);
  return ok ? 0 : 1;
}

}  // namespace mooncake::serve
