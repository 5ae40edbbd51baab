// vLLM-like colocated instances: one engine does prefill and decode of its own requests.
// vllm / vllm_prefix: a waiting prompt is prefilled in its own step (prefill first, as vLLM 0.5
// schedules), during which the running batch makes no progress. vllm_chunked: every step runs
// the decode batch plus a prefill chunk that fills the rest of a token budget.
#include <algorithm>

#include "sim/simulator_impl.h"

namespace mooncake::sim {

using engine::NanosToSeconds;

namespace {
int64_t Need(const RequestState& s) {
  return int64_t{s.trace->input_length} + s.trace->output_length;
}
}  // namespace

void Simulator::StartColocatedStep(int i) {
  DecodeInstance& inst = decode_[i];
  const bool chunked = config_.system == SystemKind::kVllmChunked;
  const Nanos now = events_.now();
  auto head_fits = [&] {
    return !inst.waiting.empty() &&
           (inst.reserved_tokens + Need(state_[inst.waiting.front()]) <= hbm_tokens_ ||
            (inst.batch.empty() && inst.prefilling < 0));
  };
  auto take_head = [&] {
    const uint32_t r = inst.waiting.front();
    inst.waiting.pop_front();
    inst.prefilling = r;
    inst.reserved_tokens += Need(state_[r]);
    state_[r].compute_start = now;
    state_[r].prefilled = true;
    return r;
  };
  Nanos t{0};
  if (!chunked) {
    if (inst.prefilling < 0 && head_fits()) {
      RequestState& s = state_[take_head()];
      t = cost_.PrefillTime(s.trace->input_length, s.prefilled_tokens);
      s.prefill_compute_s += NanosToSeconds(t);
    } else if (!inst.batch.empty()) {
      t = cost_.DecodeStepTime(static_cast<int64_t>(inst.batch.size()), inst.context_tokens);
    } else {
      inst.busy = false;
      return;
    }
  } else {
    if (inst.prefilling < 0 && head_fits()) take_head();
    int64_t chunk = 0;
    if (inst.prefilling >= 0) {
      const RequestState& s = state_[inst.prefilling];
      const int64_t budget =
          std::max<int64_t>(0, config_.chunk_tokens - static_cast<int64_t>(inst.batch.size()));
      chunk = std::min<int64_t>(budget, s.trace->input_length - s.prefilled_tokens);
      if (inst.batch.empty()) chunk = std::max<int64_t>(chunk, 1);
    }
    if (inst.batch.empty() && chunk == 0) {
      inst.busy = false;
      return;
    }
    int64_t prefix = 0;
    if (inst.prefilling >= 0) {
      RequestState& s = state_[inst.prefilling];
      prefix = s.prefilled_tokens;
      s.prefill_compute_s += NanosToSeconds(cost_.PrefillTime(prefix + chunk, prefix));
    }
    t = cost_.MixedStepTime(static_cast<int64_t>(inst.batch.size()), inst.context_tokens, chunk,
                            prefix);
    inst.step_chunk = chunk;
  }
  inst.busy = true;
  events_.Push(now + t, EventKind::kColocatedStep, i, 0);
}

void Simulator::FirstTokenColocated(int i, uint32_t r) {
  DecodeInstance& inst = decode_[i];
  RequestState& s = state_[r];
  const Nanos now = events_.now();
  s.first_token = now;
  s.last_token = now;
  s.generated = 1;
  inst.prefilling = -1;
  scheduler_.OnPrefillDone(s.trace->id, i, now);
  (void)scheduler_.AdmitToDecode(s.trace->id, i, now);  // baselines run without admission
  if (s.trace->output_length <= 1) {
    inst.reserved_tokens -= Need(s);
    FinishRequest(r, i);
    return;
  }
  inst.batch.push_back(r);
  inst.context_tokens += int64_t{s.trace->input_length} + 1;
}

void Simulator::OnColocatedStep(int i) {
  DecodeInstance& inst = decode_[i];
  const bool chunked = config_.system == SystemKind::kVllmChunked;
  if (!chunked && inst.prefilling >= 0) {
    const auto r = static_cast<uint32_t>(inst.prefilling);
    state_[r].prefilled_tokens = state_[r].trace->input_length;
    StoreCompletedBlocks(i, state_[r], true);
    FirstTokenColocated(i, r);
  } else {
    if (!inst.batch.empty()) AdvanceBatch(i);
    if (chunked && inst.prefilling >= 0) {
      const auto r = static_cast<uint32_t>(inst.prefilling);
      RequestState& s = state_[r];
      s.prefilled_tokens += inst.step_chunk;
      const bool last = s.prefilled_tokens >= s.trace->input_length;
      StoreCompletedBlocks(i, s, last);
      if (last) FirstTokenColocated(i, r);
    }
  }
  StartColocatedStep(i);
}

}  // namespace mooncake::sim
