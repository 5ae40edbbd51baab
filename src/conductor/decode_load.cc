#include "conductor/decode_load.h"

#include "engine/cost_model.h"

namespace mooncake::conductor {

DecodeLoad::DecodeLoad(int instances, const engine::CostModel* cost, Nanos assumed_decode_time)
    : cost_(cost), inst_(instances), assumed_decode_time_(assumed_decode_time) {
  for (int i = 0; i < instances; ++i) by_active_tokens_.insert(OrderKey{0, 0, i});
}

void DecodeLoad::SetActiveTokens(int instance, int64_t tokens) {
  Instance& in = inst_[instance];
  if (!in.excluded) {
    by_active_tokens_.erase(OrderKey{in.active_tokens, 0, instance});
    by_active_tokens_.insert(OrderKey{tokens, 0, instance});
  }
  in.active_tokens = tokens;
}

void DecodeLoad::Exclude(int instance) {
  Instance& in = inst_[instance];
  if (in.excluded) return;
  by_active_tokens_.erase(OrderKey{in.active_tokens, 0, instance});
  in.excluded = true;
}

void DecodeLoad::AddPending(RequestId id, int instance, Nanos join_at, int64_t tokens) {
  inst_[instance].pending[id.value] = {join_at, tokens};
}

void DecodeLoad::Join(RequestId id, int instance, Nanos now) {
  Instance& in = inst_[instance];
  auto it = in.pending.find(id.value);
  const int64_t tokens = it == in.pending.end() ? 0 : it->second.tokens;
  if (it != in.pending.end()) in.pending.erase(it);
  in.active[id.value] = {now, tokens};
  SetActiveTokens(instance, in.active_tokens + tokens);
}

void DecodeLoad::Remove(RequestId id, int instance, Nanos now) { Drop(id, instance, &now); }

void DecodeLoad::Forget(RequestId id, int instance) { Drop(id, instance, nullptr); }

void DecodeLoad::Drop(RequestId id, int instance, const Nanos* now) {
  Instance& in = inst_[instance];
  if (in.pending.erase(id.value) != 0) return;
  auto it = in.active.find(id.value);
  if (it == in.active.end()) return;
  if (now != nullptr) {
    decode_time_sum_s_ += engine::NanosToSeconds(*now - it->second.at);
    ++decode_time_count_;
  }
  SetActiveTokens(instance, in.active_tokens - it->second.tokens);
  in.active.erase(it);
}

Nanos DecodeLoad::MeanDecodeTime() const {
  if (decode_time_count_ == 0) return assumed_decode_time_;
  return engine::SecondsToNanos(decode_time_sum_s_ / static_cast<double>(decode_time_count_));
}

Nanos DecodeLoad::StepOrInfinite(int64_t batch, int64_t tokens) const {
  if (tokens > cost_->HbmKvTokenCapacity()) return Nanos::max();
  return cost_->DecodeStepTime(batch, tokens);
}

Nanos DecodeLoad::PredictTbtNow(int instance, int64_t extra_tokens) const {
  const Instance& in = inst_[instance];
  return StepOrInfinite(static_cast<int64_t>(in.active.size()) + 1,
                        in.active_tokens + extra_tokens);
}

Nanos DecodeLoad::PredictTbtAt(int instance, Nanos at, int64_t extra_tokens) const {
  const Instance& in = inst_[instance];
  const Nanos td = MeanDecodeTime();
  int64_t batch = 1, tokens = extra_tokens;
  for (const auto& [id, e] : in.active) {
    if (at - e.at < td) {
      ++batch;
      tokens += e.tokens;
    }
  }
  for (const auto& [id, e] : in.pending) {
    if (e.at <= at) {
      ++batch;
      tokens += e.tokens;
    }
  }
  return StepOrInfinite(batch, tokens);
}

}  // namespace mooncake::conductor
