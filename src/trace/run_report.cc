#include "trace/run_report.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/replace_file.h"

namespace mooncake::trace {
namespace {

nlohmann::json PercentilesJson(const Percentiles& p) {
  return {{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"max", p.max}};
}

}  // namespace

namespace {
constexpr const char* kCsvHeader =
    "id,arrival_s,outcome,reject_reason,prefill_instance,decode_instance,input_tokens,"
    "output_tokens,blocks,prefix_blocks_hit,inflight_miss_blocks,ttft_s,tbt_s,e2e_s,"
    "prefill_compute_s,ttft_predicted_s\n";

void AppendRow(const RequestRecord& r, std::string* out) {
  fmt::format_to(std::back_inserter(*out),
                 "{},{:.6f},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f}\n",
                 r.id.value, r.arrival_s, OutcomeName(r.outcome), r.reject_reason,
                 r.prefill_instance, r.decode_instance, r.input_tokens, r.output_tokens, r.blocks,
                 r.prefix_blocks_hit, r.inflight_miss_blocks, r.ttft_s, r.tbt_s, r.e2e_s,
                 r.prefill_compute_s, r.ttft_predicted_s);
}
}  // namespace

std::string RequestsCsv(const std::vector<RequestRecord>& records) {
  std::string out = kCsvHeader;
  out.reserve(records.size() * 96);
  for (const RequestRecord& r : records) AppendRow(r, &out);
  return out;
}

Result<std::unique_ptr<RequestLog>> RequestLog::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return IoError("cannot write " + path);
  std::fputs(kCsvHeader, f);
  std::fflush(f);
  return std::unique_ptr<RequestLog>(new RequestLog(f));
}

void RequestLog::Append(const RequestRecord& record) {
  std::string row;
  AppendRow(record, &row);
  std::lock_guard<std::mutex> lock(mutex_);
  std::fputs(row.c_str(), file_.get());
  std::fflush(file_.get());
}

std::string SummaryJson(const Summary& s) {
  nlohmann::ordered_json j;
  j["requests"] = {{"total", s.total},
                   {"completed", s.completed},
                   {"rejected", s.rejected},
                   {"lost", s.lost},
                   {"failed", s.failed}};
  j["ttft_s"] = PercentilesJson(s.ttft_s);
  j["tbt_s"] = PercentilesJson(s.tbt_s);
  j["e2e_s"] = PercentilesJson(s.e2e_s);
  j["ttft_prediction_error"] = PercentilesJson(s.ttft_prediction_error);
  nlohmann::ordered_json cap = nlohmann::ordered_json::array();
  for (const auto& [tbt, share] : s.effective_capacity) {
    cap.push_back({{"ttft_s", s.ttft_threshold_s}, {"tbt_s", tbt}, {"share", share}});
  }
  j["effective_capacity"] = cap;
  j["rejections"] = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : s.rejections) j["rejections"][reason] = n;
  j["failures"] = nlohmann::ordered_json::object();
  for (const auto& [reason, n] : s.failures) j["failures"][reason] = n;
  j["prefix_hit"] = {{"blocks", s.BlockHitRate()},
                     {"tokens", s.TokenHitRate()},
                     {"prompt_blocks", s.prompt_blocks},
                     {"hit_blocks", s.prefix_blocks_hit},
                     {"inflight_miss_blocks", s.inflight_miss_blocks},
                     {"prompt_tokens", s.prompt_tokens},
                     {"hit_tokens", s.prefix_tokens_hit}};
  j["prefill_compute_s"] = s.prefill_compute_s;
  j["dead_ranks"] = nlohmann::ordered_json::array();
  for (const RankLoss& d : s.dead_ranks) {
    j["dead_ranks"].push_back({{"rank", d.rank}, {"after_s", d.after_s}, {"why", d.why}});
  }
  if (s.refused_data_messages_by_peer) {
    j["refused_data_messages_by_peer"] = nlohmann::ordered_json::object();
    for (const auto& [peer, n] : *s.refused_data_messages_by_peer) {
      j["refused_data_messages_by_peer"][peer] = n;
    }
  }
  j["extra"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : s.extra) j["extra"][k] = v;
  return j.dump(2) + "\n";
}

std::string SummaryTable(const Summary& s) {
  std::string out;
  fmt::format_to(std::back_inserter(out),
                 "requests  total {}  completed {}  rejected {}  lost {}  failed {}\n", s.total,
                 s.completed, s.rejected, s.lost, s.failed);
  fmt::format_to(std::back_inserter(out),
                 "TTFT s    mean {:.3f}  p50 {:.3f}  p90 {:.3f}  p99 {:.3f}\n", s.ttft_s.mean,
                 s.ttft_s.p50, s.ttft_s.p90, s.ttft_s.p99);
  fmt::format_to(std::back_inserter(out),
                 "TBT ms    mean {:.1f}  p50 {:.1f}  p90 {:.1f}  p99 {:.1f}\n", s.tbt_s.mean * 1e3,
                 s.tbt_s.p50 * 1e3, s.tbt_s.p90 * 1e3, s.tbt_s.p99 * 1e3);
  if (s.ttft_prediction_error.p50 > 0 || s.ttft_prediction_error.p90 > 0) {
    fmt::format_to(std::back_inserter(out),
                   "predicted |TTFT - prediction| / prediction  p50 {:.1f}%  p90 {:.1f}%\n",
                   s.ttft_prediction_error.p50 * 100, s.ttft_prediction_error.p90 * 100);
  }
  out += "capacity ";
  for (const auto& [tbt, share] : s.effective_capacity) {
    fmt::format_to(std::back_inserter(out), " TBT<={:.0f}ms {:.1f}%", tbt * 1e3, share * 100);
  }
  fmt::format_to(std::back_inserter(out), "  (TTFT<={:.0f}s)\n", s.ttft_threshold_s);
  fmt::format_to(std::back_inserter(out),
                 "prefix    hit {:.1f}% of blocks, {:.1f}% of tokens; prefill GPU {:.1f} s\n",
                 s.BlockHitRate() * 100, s.TokenHitRate() * 100, s.prefill_compute_s);
  if (!s.rejections.empty()) {
    out += "rejected ";
    for (const auto& [reason, n] : s.rejections) {
      fmt::format_to(std::back_inserter(out), " {} {}", reason, n);
    }
    out += "\n";
  }
  return out;
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  // Replaced whole: the conductor rewrites summary.json at every progress line, so that a job
  // killed midway leaves one behind, and a kill inside an in-place write left half of it.
  return ReplaceFile(path, text);
}

Status WriteRunFolder(const std::string& dir, const std::vector<RequestRecord>& records,
                      const Summary& summary) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(fmt::format("{}: cannot create run folder: {}", dir, ec.message()));
  MC_RETURN_IF_ERROR(WriteTextFile(dir + "/requests.csv", RequestsCsv(records)));
  return WriteTextFile(dir + "/summary.json", SummaryJson(summary));
}

Status WriteRunInfo(const std::string& dir, const RunInfo& info) {
  nlohmann::ordered_json j;
  j["command"] = info.command;
  j["trace"] = info.trace.empty() ? "synthetic" : info.trace;
  j["config"] = info.config;
  j["system"] = info.system;
  j["policy"] = info.policy;
  return WriteTextFile(dir + "/run.json", j.dump(2) + "\n");
}

}  // namespace mooncake::trace
