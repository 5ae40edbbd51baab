// Per-request records and the run summary (DESIGN.md "Metrics").
//
// All times are model time in seconds. TBT of a request = mean of its longest 10 % inter-token
// gaps (at least one gap). A request is "effective" when it completed with TTFT <= ttft
// threshold and TBT <= tbt threshold; effective request capacity = effective / total.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "common/ids.h"

namespace mooncake::trace {

// kLost: not finished by the job deadline. kFailed: its instance's rank died and it could not be
// served elsewhere (re-dispatched once at most); the reason says which rank.
enum class Outcome : uint8_t { kCompleted, kRejected, kLost, kFailed };
const char* OutcomeName(Outcome o);

struct RequestRecord {
  RequestId id;
  double arrival_s = 0;
  Outcome outcome = Outcome::kLost;
  std::string reject_reason;  // empty unless rejected
  bool prefilled = false;     // reached a prefill instance (counts in hit rates)
  int prefill_instance = -1;
  int decode_instance = -1;
  int32_t input_tokens = 0;
  int32_t output_tokens = 0;
  int32_t blocks = 0;                // hash ids of the prompt
  int32_t prefix_blocks_hit = 0;     // prompt blocks reused from a cache (local or fetched)
  int32_t inflight_miss_blocks = 0;  // missed only because another request was computing them
  double ttft_s = 0;
  double tbt_s = 0;
  double e2e_s = 0;
  double prefill_compute_s = 0;  // modelled GPU time of this request's prefill
  // The TTFT the scheduler predicted when it admitted the request (0: none was made).
  double ttft_predicted_s = 0;
};

// Mean of the longest ceil(10 %) of `expected_gaps` gaps, kept in O(k) memory.
class TbtAccumulator {
 public:
  explicit TbtAccumulator(int64_t expected_gaps = 0);
  void Add(double gap_s);
  // 0 when no gap was added.
  double Tbt() const;

 private:
  size_t k_;
  std::priority_queue<double, std::vector<double>, std::greater<double>> top_;
};

struct Thresholds {
  double ttft_s = 30;
  std::vector<double> tbt_s = {0.1, 0.2, 0.3};  // capacity is reported at each
};

struct Percentiles {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
Percentiles ComputePercentiles(std::vector<double> values);

// A rank declared dead during a live run.
struct RankLoss {
  int rank = -1;
  double after_s = 0;  // wall seconds after the replay started
  std::string why;
};

struct Summary {
  uint64_t total = 0, completed = 0, rejected = 0, lost = 0, failed = 0;
  std::map<std::string, uint64_t> failures;  // by reason
  Percentiles ttft_s, tbt_s, e2e_s;          // over completed requests
  // |ttft - ttft_predicted| / ttft_predicted over completed requests that have a prediction:
  // how well the cost model foresaw what happened (early rejection lives on it).
  Percentiles ttft_prediction_error;
  double ttft_threshold_s = 0;
  std::vector<std::pair<double, double>> effective_capacity;  // (tbt threshold s, share)
  std::map<std::string, uint64_t> rejections;                 // by reason
  uint64_t prompt_blocks = 0, prefix_blocks_hit = 0, inflight_miss_blocks = 0;
  uint64_t prompt_tokens = 0, prefix_tokens_hit = 0;
  double prefill_compute_s = 0;
  std::map<std::string, double> extra;  // bytes moved per plane, counters, store occupancy, ...
  std::vector<RankLoss> dead_ranks;     // live runs
  // Live runs: data-path messages refused, by the sender's endpoint (transport/transport.h names
  // them); summary.json's refused_data_messages_by_peer, an object beside extra (whose values
  // are numbers only). Absent from simulated runs.
  std::optional<std::map<std::string, uint64_t>> refused_data_messages_by_peer;

  double BlockHitRate() const;
  double TokenHitRate() const;
};

// Summarizes records; counts a hit token as min(512 * blocks hit, input tokens).
Summary Summarize(const std::vector<RequestRecord>& records, const Thresholds& thresholds);
double EffectiveCapacity(const std::vector<RequestRecord>& records, double ttft_s, double tbt_s);

}  // namespace mooncake::trace
