// vLLM-like colocated instances: one engine prefills and decodes its own requests, scheduled as
// vLLM 0.5's scheduler does (vllm/core/scheduler.py; docs/EVAL.md cites the code it follows):
// - vllm, vllm_prefix (Scheduler._schedule_default): waiting prompts are taken first come,
//   first served into one prefill step while their prompt tokens fit max_num_batched_tokens,
//   the running sequences max_num_seqs, and their KV the free HBM. A step that prefills decodes
//   nothing; without a prompt to start, the step decodes the whole running batch.
// - vllm_chunked (Scheduler._schedule_chunked_prefill): every step decodes the running batch
//   (one token each, first), continues the prompts in progress, then starts waiting ones, each
//   taking what is left of the max_num_batched_tokens budget.
// Every step costs CostModel::StepTime of its decode tokens and prompt chunks (one roofline for
// the batched pass). A prompt over vLLM's prompt limit is ignored by vLLM: rejected here as
// prompt_too_long. Unlike vLLM, a request reserves HBM for its prompt and its whole output when
// it starts, so nothing is ever preempted.
#include <algorithm>

#include "sim/simulator_impl.h"

namespace mooncake::sim {

using engine::NanosToSeconds;

namespace {
int64_t Need(const RequestState& s) {
  return int64_t{s.trace->input_length} + s.trace->output_length;
}
}  // namespace

void Simulator::ArriveColocated(uint32_t r) {
  RequestState& s = state_[r];
  const int i = s.decision.prefill;
  const bool chunked = config_.system == SystemKind::kVllmChunked;
  // Scheduler.prompt_limit: max_model_len, and also the step budget without chunking.
  const int64_t limit =
      chunked ? vllm_.max_model_len : std::min(vllm_.max_model_len, vllm_.max_num_batched_tokens);
  if (s.trace->input_length > limit) {
    scheduler_.Abandon(s.trace->id);
    s.outcome = trace::Outcome::kRejected;
    s.reason = "prompt_too_long";
    s.done = events_.now();
    return;
  }
  DecodeInstance& inst = decode_[i];
  inst.waiting.push_back(r);
  if (!inst.busy) StartColocatedStep(i);
}

bool Simulator::Fits(const DecodeInstance& inst, const RequestState& s) const {
  // An instance with nothing running takes any request alone rather than block forever.
  return inst.decoding.reserved_tokens() + Need(s) <= hbm_tokens_ ||
         (inst.decoding.batch_empty() && inst.prefilling.empty());
}

// _schedule_prefills without chunking: whole prompts, first come first served, until one does
// not fit. Returns whether the step prefills.
bool Simulator::TakePrefills(DecodeInstance& inst, engine::StepWork* work) {
  int64_t tokens = 0;
  auto seqs = static_cast<int64_t>(inst.decoding.batch_size());
  while (!inst.waiting.empty()) {
    const uint32_t r = inst.waiting.front();
    RequestState& s = state_[r];
    const int64_t prompt = s.trace->input_length;  // vLLM 0.5 budgets the whole prompt
    if (tokens + prompt > vllm_.max_num_batched_tokens || seqs + 1 > vllm_.max_num_seqs ||
        !Fits(inst, s)) {
      break;
    }
    inst.waiting.pop_front();
    inst.prefilling.push_back(r);
    inst.decoding.Reserve(Need(s));
    s.compute_start = events_.now();
    s.prefilled = true;
    s.step_tokens = prompt - s.prefilled_tokens;  // a cached prefix is not recomputed
    work->AddChunk(cost_, s.prefilled_tokens, s.step_tokens);
    s.prefill_compute_s +=
        NanosToSeconds(cost_.PrefillChunkTime(s.prefilled_tokens, s.step_tokens));
    tokens += prompt;
    ++seqs;
  }
  return !inst.prefilling.empty();
}

// _schedule_chunked_prefill: the decodes take one token each, then the prompts in progress and
// the waiting ones share what is left of the budget, oldest first.
void Simulator::TakeChunks(DecodeInstance& inst, engine::StepWork* work) {
  int64_t budget = vllm_.max_num_batched_tokens - static_cast<int64_t>(inst.decoding.batch_size());
  auto seqs = static_cast<int64_t>(inst.decoding.batch_size() + inst.prefilling.size());
  auto chunk = [&](RequestState& s) {
    s.step_tokens = std::min<int64_t>(budget, s.trace->input_length - s.prefilled_tokens);
    if (s.step_tokens <= 0) return;
    work->AddChunk(cost_, s.prefilled_tokens, s.step_tokens);
    s.prefill_compute_s +=
        NanosToSeconds(cost_.PrefillChunkTime(s.prefilled_tokens, s.step_tokens));
    budget -= s.step_tokens;
  };
  for (uint32_t r : inst.prefilling) chunk(state_[r]);
  while (budget > 0 && !inst.waiting.empty() && seqs < vllm_.max_num_seqs &&
         Fits(inst, state_[inst.waiting.front()])) {
    const uint32_t r = inst.waiting.front();
    inst.waiting.pop_front();
    inst.prefilling.push_back(r);
    RequestState& s = state_[r];
    inst.decoding.Reserve(Need(s));
    s.compute_start = events_.now();
    s.prefilled = true;
    chunk(s);
    ++seqs;
  }
}

void Simulator::StartColocatedStep(int i) {
  DecodeInstance& inst = decode_[i];
  engine::StepWork work;
  if (config_.system == SystemKind::kVllmChunked) {
    TakeChunks(inst, &work);
    inst.prefill_step = false;
  } else {
    inst.prefill_step = TakePrefills(inst, &work);
  }
  if (!inst.prefill_step) {
    work.decode_seqs = static_cast<int64_t>(inst.decoding.batch_size());
    work.decode_context_tokens = inst.decoding.context_tokens();
  }
  if (work.decode_seqs == 0 && work.prefill_tokens == 0) {
    inst.busy = false;
    return;
  }
  if (work.prefill_tokens > 0) {
    ++prefill_steps_;
    for (uint32_t r : inst.prefilling) prefill_step_chunks_ += state_[r].step_tokens > 0 ? 1 : 0;
  }
  inst.busy = true;
  events_.Push(events_.now() + cost_.StepTime(work), EventKind::kColocatedStep, i, 0);
}

void Simulator::FirstTokenColocated(int i, uint32_t r) {
  DecodeInstance& inst = decode_[i];
  RequestState& s = state_[r];
  const Nanos now = events_.now();
  s.first_token = now;
  s.last_token = now;
  s.generated = 1;
  scheduler_.OnPrefillDone(s.trace->id, i, now);
  (void)scheduler_.AdmitToDecode(s.trace->id, i, now);  // baselines run without admission
  if (s.trace->output_length <= 1) {
    inst.decoding.Release(Need(s));
    FinishRequest(r, i);
    return;
  }
  inst.decoding.JoinReserved({r, s.trace->input_length, s.trace->output_length, s.generated});
}

void Simulator::OnColocatedStep(int i) {
  DecodeInstance& inst = decode_[i];
  // The decodes of this step first: a prompt finished in it has its first token only.
  if (!inst.prefill_step && !inst.decoding.batch_empty()) AdvanceBatch(i);
  size_t keep = 0;
  for (size_t k = 0; k < inst.prefilling.size(); ++k) {
    const uint32_t r = inst.prefilling[k];
    RequestState& s = state_[r];
    s.prefilled_tokens += s.step_tokens;
    s.step_tokens = 0;
    const bool last = s.prefilled_tokens >= s.trace->input_length;
    StoreCompletedBlocks(i, s, last);
    if (last) {
      FirstTokenColocated(i, r);
    } else {
      inst.prefilling[keep++] = r;
    }
  }
  inst.prefilling.resize(keep);
  inst.prefill_step = false;
  StartColocatedStep(i);
}

}  // namespace mooncake::sim
