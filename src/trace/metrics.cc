#include "trace/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/enum_names.h"
#include "trace/trace_request.h"

namespace mooncake::trace {

const char* OutcomeName(Outcome o) {
  static constexpr EnumName<Outcome> kOutcomes[] = {{Outcome::kCompleted, "completed"},
                                                    {Outcome::kRejected, "rejected"},
                                                    {Outcome::kLost, "lost"},
                                                    {Outcome::kFailed, "failed"}};
  return NameIn(kOutcomes, o);
}

TbtAccumulator::TbtAccumulator(int64_t expected_gaps)
    : k_(static_cast<size_t>(std::max<int64_t>(1, (expected_gaps + 9) / 10))) {}

void TbtAccumulator::Add(double gap_s) {
  if (top_.size() < k_) {
    top_.push(gap_s);
  } else if (gap_s > top_.top()) {
    top_.pop();
    top_.push(gap_s);
  }
}

double TbtAccumulator::Tbt() const {
  if (top_.empty()) return 0;
  auto copy = top_;
  double sum = 0;
  const size_t n = copy.size();
  while (!copy.empty()) {
    sum += copy.top();
    copy.pop();
  }
  return sum / static_cast<double>(n);
}

Percentiles ComputePercentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  p.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  auto at = [&](double q) {
    const auto idx = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, idx == 0 ? 0 : idx - 1)];
  };
  p.p50 = at(0.5);
  p.p90 = at(0.9);
  p.p99 = at(0.99);
  p.max = v.back();
  return p;
}

double Summary::BlockHitRate() const {
  return prompt_blocks == 0 ? 0.0 : static_cast<double>(prefix_blocks_hit) / prompt_blocks;
}
double Summary::TokenHitRate() const {
  return prompt_tokens == 0 ? 0.0 : static_cast<double>(prefix_tokens_hit) / prompt_tokens;
}

double EffectiveCapacity(const std::vector<RequestRecord>& records, double ttft_s, double tbt_s) {
  if (records.empty()) return 0;
  uint64_t good = 0;
  for (const RequestRecord& r : records) {
    if (r.outcome == Outcome::kCompleted && r.ttft_s <= ttft_s && r.tbt_s <= tbt_s) ++good;
  }
  return static_cast<double>(good) / static_cast<double>(records.size());
}

Summary Summarize(const std::vector<RequestRecord>& records, const Thresholds& thresholds) {
  Summary s;
  s.total = records.size();
  s.ttft_threshold_s = thresholds.ttft_s;
  std::vector<double> ttft, tbt, e2e, prediction_error;
  for (const RequestRecord& r : records) {
    switch (r.outcome) {
      case Outcome::kCompleted:
        ++s.completed;
        ttft.push_back(r.ttft_s);
        tbt.push_back(r.tbt_s);
        e2e.push_back(r.e2e_s);
        if (r.ttft_predicted_s > 0) {
          prediction_error.push_back(std::abs(r.ttft_s - r.ttft_predicted_s) / r.ttft_predicted_s);
        }
        break;
      case Outcome::kRejected:
        ++s.rejected;
        ++s.rejections[r.reject_reason.empty() ? "unknown" : r.reject_reason];
        break;
      case Outcome::kLost:
        ++s.lost;
        break;
      case Outcome::kFailed:
        ++s.failed;
        ++s.failures[r.reject_reason.empty() ? "unknown" : r.reject_reason];
        break;
    }
    // Hit rates count the prompts that reached a prefill instance.
    if (!r.prefilled) continue;
    s.prompt_blocks += r.blocks;
    s.prefix_blocks_hit += r.prefix_blocks_hit;
    s.inflight_miss_blocks += r.inflight_miss_blocks;
    s.prompt_tokens += r.input_tokens;
    s.prefix_tokens_hit += std::min<uint64_t>(
        static_cast<uint64_t>(r.prefix_blocks_hit) * kTraceBlockTokens, r.input_tokens);
    s.prefill_compute_s += r.prefill_compute_s;
  }
  s.ttft_s = ComputePercentiles(std::move(ttft));
  s.tbt_s = ComputePercentiles(std::move(tbt));
  s.e2e_s = ComputePercentiles(std::move(e2e));
  s.ttft_prediction_error = ComputePercentiles(std::move(prediction_error));
  for (double t : thresholds.tbt_s) {
    s.effective_capacity.emplace_back(t, EffectiveCapacity(records, thresholds.ttft_s, t));
  }
  return s;
}

}  // namespace mooncake::trace
