#include "eval/eval_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "engine/cost_model.h"

namespace mooncake::eval {

std::string PointLabel(const SweepPoint& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

std::string OneLineSummary(const trace::Summary& s, double wall_s) {
  std::string cap;
  for (const auto& [tbt, share] : s.effective_capacity) {
    cap += fmt::format(" cap@{:.0f}ms={:.1f}%", tbt * 1e3, share * 100);
  }
  return fmt::format(
      "done {}/{} rejected {} TTFT mean {:.2f}s TBT mean {:.0f}ms hit {:.1f}%{} ({:.2f}s)",
      s.completed, s.total, s.rejected, s.ttft_s.mean, s.tbt_s.mean * 1e3, s.BlockHitRate() * 100,
      cap, wall_s);
}

std::string SweepCsvHeader(const std::vector<SweepAxis>& axes) {
  std::string h = "point";
  for (const SweepAxis& a : axes) h += "," + a.key;
  h += ",system,policy,prefill,decode,load_scale,capacity_blocks,ttft_slo_s,tbt_slo_s,total,"
       "completed,rejected,lost,ttft_mean_s,ttft_p50_s,ttft_p90_s,ttft_p99_s,tbt_mean_s,"
       "tbt_p50_s,tbt_p90_s,tbt_p99_s,capacity_at_slo,capacity_100ms,capacity_200ms,"
       "capacity_300ms,hit_rate_blocks,hit_rate_tokens,inflight_miss_blocks,prefill_compute_s,"
       "wall_s\n";
  return h;
}

std::string SweepCsvRow(size_t index, const SweepPoint& point, const EvalOptions& o,
                        const sim::SimResult& r, double wall_s) {
  const trace::Summary& s = r.summary;
  const auto& c = o.sched.scheduler;
  const double ttft_slo = engine::NanosToSeconds(c.ttft_slo);
  const double tbt_slo = engine::NanosToSeconds(c.tbt_slo);
  std::string row = std::to_string(index);
  for (const auto& kv : point) row += "," + kv.second;
  const bool colocated = o.system != sim::SystemKind::kMooncake;
  fmt::format_to(std::back_inserter(row),
                 ",{},{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},"
                 "{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{:.3f},{:.3f}\n",
                 sim::SystemKindName(o.system),
                 colocated ? "load_balance" : conductor::PrefillPolicyName(c.policy),
                 c.prefill_instances, colocated ? 0 : c.decode_instances, o.load_scale,
                 c.cache_capacity_blocks, ttft_slo, tbt_slo, s.total, s.completed, s.rejected,
                 s.lost, s.ttft_s.mean, s.ttft_s.p50, s.ttft_s.p90, s.ttft_s.p99, s.tbt_s.mean,
                 s.tbt_s.p50, s.tbt_s.p90, s.tbt_s.p99,
                 trace::EffectiveCapacity(r.records, ttft_slo, tbt_slo),
                 trace::EffectiveCapacity(r.records, ttft_slo, 0.1),
                 trace::EffectiveCapacity(r.records, ttft_slo, 0.2),
                 trace::EffectiveCapacity(r.records, ttft_slo, 0.3), s.BlockHitRate(),
                 s.TokenHitRate(), s.inflight_miss_blocks, s.prefill_compute_s, wall_s);
  return row;
}

std::string SortRows(const std::vector<std::string>& gathered) {
  std::vector<std::pair<size_t, std::string>> rows;
  for (const std::string& text : gathered) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      rows.emplace_back(std::stoul(line.substr(0, line.find(','))), line);
    }
  }
  std::sort(rows.begin(), rows.end());
  std::string out;
  for (const auto& [i, line] : rows) out += line + "\n";
  return out;
}

}  // namespace mooncake::eval
