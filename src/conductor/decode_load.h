// The conductor's view of the decode instances' load, and its TBT predictions.
//
// A request is "pending" on a decode instance from acceptance until it joins the batch (its
// predicted join time is the predicted end of its prefill), then "active" until done. The
// predicted TBT of an instance is the cost model's step time for its batch plus the new
// request; a batch that would not fit in HBM predicts an infinite TBT. The forecast for a
// future time t' (prediction-based early rejection) assumes every request decodes for the
// same time t_d (the running mean of observed decode times, seeded by `assumed_decode_time`):
// it adds pending requests joining before t' and drops active ones that will have decoded
// longer than t_d by then. Not thread-safe.
//
// For the scheduler's pruned search it also keeps the instances ordered by active tokens (the
// decode choice's tie-break). Its lower bounds rest on DecodeStepTime being non-decreasing in
// both the batch and the tokens (a roofline of non-negative terms; tested).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "conductor/load_order.h"
#include "engine/cost_model.h"

namespace mooncake::conductor {

class DecodeLoad {
 public:
  DecodeLoad(int instances, const engine::CostModel* cost, Nanos assumed_decode_time);

  // Tokens of KV a request holds during decode (its prompt and all of its output).
  static int64_t ContextTokens(int32_t input, int32_t output) { return int64_t{input} + output; }

  void AddPending(RequestId id, int instance, Nanos join_at, int64_t tokens);
  void Join(RequestId id, int instance, Nanos now);
  // Removes the request wherever it is (pending or active); records its decode time if active.
  void Remove(RequestId id, int instance, Nanos now);
  // Removes it without counting a decode time (a request abandoned when its rank died).
  void Forget(RequestId id, int instance);

  // Step time of the instance with the extra request, now (active requests only).
  Nanos PredictTbtNow(int instance, int64_t extra_tokens) const;
  // Step time forecast for time `at` with the extra request.
  Nanos PredictTbtAt(int instance, Nanos at, int64_t extra_tokens) const;
  // StepOrInfinite of `batch` requests holding `tokens`: a lower bound of both predictions for
  // an instance whose forecast holds at least that much.
  Nanos StepTimeFor(int64_t batch, int64_t tokens) const { return StepOrInfinite(batch, tokens); }
  int64_t ActiveTokens(int instance) const { return inst_[instance].active_tokens; }
  int ActiveCount(int instance) const { return static_cast<int>(inst_[instance].active.size()); }
  Nanos MeanDecodeTime() const;

  // The instances by (active tokens, id), without the excluded ones.
  const OrderSet& by_active_tokens() const { return by_active_tokens_; }
  // The instance is never chosen again (its rank died): leaves the order for good.
  void Exclude(int instance);

 private:
  struct Entry {
    Nanos at;  // join time (predicted for pending, actual for active)
    int64_t tokens;
  };
  struct Instance {
    std::unordered_map<uint64_t, Entry> pending, active;
    int64_t active_tokens = 0;
    bool excluded = false;
  };
  Nanos StepOrInfinite(int64_t batch, int64_t tokens) const;
  void SetActiveTokens(int instance, int64_t tokens);
  void Drop(RequestId id, int instance, const Nanos* now);  // now == null: no decode time

  const engine::CostModel* cost_;
  std::vector<Instance> inst_;
  OrderSet by_active_tokens_;  // (active tokens, 0, instance)
  Nanos assumed_decode_time_;
  double decode_time_sum_s_ = 0;
  uint64_t decode_time_count_ = 0;
};

}  // namespace mooncake::conductor
