#include "sim/simulator.h"

#include <algorithm>
#include <cmath>

#include "sim/simulator_impl.h"

namespace mooncake::sim {

using conductor::RejectReason;
using engine::NanosToSeconds;

Simulator::Simulator(const SimConfig& config, const VllmLimits& vllm, const engine::CostModel& cost,
                     const std::vector<trace::TraceRequest>& requests, const SimHooks& hooks)
    : config_(config),
      vllm_(vllm),
      cost_(cost),
      requests_(requests),
      scheduler_(EffectiveSchedulerConfig(config), &cost),
      state_(requests.size()),
      hbm_tokens_(cost.HbmKvTokenCapacity()) {
  const auto sc = EffectiveSchedulerConfig(config);
  scheduler_.set_call_log(hooks.scheduler_calls);
  if (config.system == SystemKind::kMooncake && config.store.ranks > 0) {
    store_ = std::make_unique<StoreSim>(config.store);
  }
  prefill_.resize(sc.prefill_instances);
  decode_.assign(sc.colocated ? sc.prefill_instances : sc.decode_instances,
                 DecodeInstance(hbm_tokens_));
  for (size_t i = 0; i < requests.size(); ++i) {
    RequestState& s = state_[i];
    s.trace = &requests[i];
    s.arrival = engine::SecondsToNanos(static_cast<double>(requests[i].timestamp_ms) / 1e3 /
                                       config.load_scale);
    s.tbt = trace::TbtAccumulator(std::max(0, requests[i].output_length - 1));
    events_.Push(s.arrival, EventKind::kArrival, -1, static_cast<uint32_t>(i));
  }
}

SimResult Simulator::Run() {
  while (!events_.empty()) {
    const Event e = events_.Pop();
    switch (e.kind) {
      case EventKind::kArrival:
        OnArrival(e.request);
        break;
      case EventKind::kFetchDone:
        OnFetchDone(e.instance, e.request);
        break;
      case EventKind::kPrefillChunk:
        OnPrefillChunk(e.instance, e.request);
        break;
      case EventKind::kKvArrived:
        OnKvArrived(e.instance, e.request);
        break;
      case EventKind::kDecodeStep:
        OnDecodeStep(e.instance);
        break;
      case EventKind::kColocatedStep:
        OnColocatedStep(e.instance);
        break;
    }
  }
  return Collect();
}

void Simulator::RejectRequest(uint32_t r, RejectReason reason) {
  RequestState& s = state_[r];
  s.outcome = trace::Outcome::kRejected;
  s.reason = conductor::RejectReasonName(reason);
  s.done = events_.now();
}

void Simulator::OnArrival(uint32_t r) {
  RequestState& s = state_[r];
  const trace::TraceRequest& t = *s.trace;
  conductor::Request req{t.id, s.arrival, t.input_length, t.output_length, t.hash_ids};
  s.decision = scheduler_.Decide(req, events_.now());
  if (!s.decision.accepted) {
    RejectRequest(r, s.decision.reason);
    return;
  }
  s.prefilled_tokens = s.decision.prefix_tokens;
  s.stored_blocks = static_cast<size_t>(s.decision.prefix_blocks);
  s.prefix_blocks_hit = s.decision.prefix_blocks;
  if (config_.system != SystemKind::kMooncake) {
    ArriveColocated(r);
    return;
  }
  PrefillInstance& p = prefill_[s.decision.prefill];
  p.queue.push_back(r);
  if (!p.busy) StartPrefill(s.decision.prefill);
}

void Simulator::StartPrefill(int p) {
  PrefillInstance& inst = prefill_[p];
  if (inst.queue.empty()) {
    inst.busy = false;
    return;
  }
  inst.busy = true;
  const uint32_t r = inst.queue.front();
  inst.queue.pop_front();
  RequestState& s = state_[r];
  if (store_) ReadPrefixFromStore(s);
  if (s.decision.t_transfer > Nanos(0)) {
    const int blocks = s.decision.prefix_blocks - s.decision.local_prefix_blocks;
    bytes_["prefix_fetch"] += static_cast<double>(cost_.KvBytesPerBlock()) *
                              (blocks > 0 ? blocks : s.decision.prefix_blocks);
    events_.Push(events_.now() + s.decision.t_transfer, EventKind::kFetchDone, p, r);
    return;
  }
  OnFetchDone(p, r);
}

// The prefill rank reads the whole reused prefix from the store; blocks the store no longer
// holds (evicted) are recomputed from the first missing one on, as the live prefill role does.
void Simulator::ReadPrefixFromStore(RequestState& s) {
  const int want = s.decision.prefix_blocks;
  const int present =
      store_->ReadPrefix(events_.now(), std::span<const BlockHash>(s.trace->hash_ids).first(want));
  s.prefix_blocks_hit = present;
  s.written_blocks = static_cast<size_t>(present);
  if (present < want) s.prefilled_tokens = int64_t{present} * cost_.block_tokens();
}

void Simulator::OnFetchDone(int p, uint32_t r) {
  RequestState& s = state_[r];
  const conductor::Decision& d = s.decision;
  if (d.fetch_from >= 0) {
    // The pulled blocks stay on this instance: hot blocks end up replicated.
    const auto& ids = s.trace->hash_ids;
    scheduler_.OnBlocksStored(p,
                              std::span<const BlockHash>(ids).subspan(
                                  d.local_prefix_blocks, d.prefix_blocks - d.local_prefix_blocks),
                              events_.now());
  }
  s.compute_start = events_.now();
  s.prefilled = true;
  ScheduleChunk(p, r);
}

void Simulator::ScheduleChunk(int p, uint32_t r) {
  RequestState& s = state_[r];
  const int64_t input = s.trace->input_length;
  int64_t end = input;
  if (config_.chunk_tokens > 0) end = std::min(input, s.prefilled_tokens + config_.chunk_tokens);
  const Nanos t = cost_.PrefillChunkTime(s.prefilled_tokens, end - s.prefilled_tokens);
  s.prefill_compute_s += NanosToSeconds(t);
  s.prefilled_tokens = end;
  events_.Push(events_.now() + t, EventKind::kPrefillChunk, p, r);
}

void Simulator::StoreCompletedBlocks(int p, RequestState& s, bool all) {
  const auto& ids = s.trace->hash_ids;
  const size_t complete =
      all ? ids.size()
          : std::min(ids.size(), static_cast<size_t>(s.prefilled_tokens / cost_.block_tokens()));
  if (store_ && complete > s.written_blocks) {
    store_->Write(events_.now(), std::span<const BlockHash>(ids).subspan(
                                     s.written_blocks, complete - s.written_blocks));
    s.written_blocks = complete;
  }
  if (complete <= s.stored_blocks) return;
  scheduler_.OnBlocksStored(
      p, std::span<const BlockHash>(ids).subspan(s.stored_blocks, complete - s.stored_blocks),
      events_.now());
  s.stored_blocks = complete;
}

void Simulator::OnPrefillChunk(int p, uint32_t r) {
  RequestState& s = state_[r];
  const bool last = s.prefilled_tokens >= s.trace->input_length;
  StoreCompletedBlocks(p, s, last);
  if (!last) {
    ScheduleChunk(p, r);
    return;
  }
  const Nanos now = events_.now();
  s.first_token = now;
  s.last_token = now;
  s.generated = 1;
  scheduler_.OnPrefillDone(s.trace->id, p, now);
  const int d = s.decision.decode;
  if (s.trace->output_length <= 1) {
    FinishRequest(r, d);
  } else {
    // KV streams layer by layer during the prefill; the last layer leaves after the compute.
    const uint64_t bytes = cost_.KvBytesPerToken() * static_cast<uint64_t>(s.trace->input_length);
    bytes_["prefill_to_decode"] += static_cast<double>(bytes);
    const Nanos xfer = cost_.TransferTime(bytes);
    const Nanos arrive = std::max(now + xfer / cost_.model().layers, s.compute_start + xfer);
    events_.Push(arrive, EventKind::kKvArrived, d, r);
  }
  StartPrefill(p);
}

void Simulator::OnKvArrived(int d, uint32_t r) {
  RequestState& s = state_[r];
  const RejectReason reason = scheduler_.AdmitToDecode(s.trace->id, d, events_.now());
  if (reason != RejectReason::kNone) {
    RejectRequest(r, reason);
    return;
  }
  DecodeInstance& inst = decode_[d];
  inst.decoding.Enqueue({r, s.trace->input_length, s.trace->output_length, s.generated});
  if (!inst.busy) StartDecodeStep(d);
}

void Simulator::StartDecodeStep(int d) {
  DecodeInstance& inst = decode_[d];
  inst.decoding.AdmitWaiting();
  if (inst.decoding.batch_empty()) {
    inst.busy = false;
    return;
  }
  inst.busy = true;
  const Nanos t = cost_.DecodeStepTime(static_cast<int64_t>(inst.decoding.batch_size()),
                                       inst.decoding.context_tokens());
  events_.Push(events_.now() + t, EventKind::kDecodeStep, d, 0);
}

void Simulator::AdvanceBatch(int d) {
  const Nanos now = events_.now();
  decode_[d].decoding.Advance([&](const auto& seq, bool finished) {
    RequestState& s = state_[seq.payload];
    s.tbt.Add(NanosToSeconds(now - s.last_token));
    s.last_token = now;
    s.generated = static_cast<int32_t>(seq.generated);
    if (finished) FinishRequest(seq.payload, d);
  });
}

void Simulator::OnDecodeStep(int d) {
  AdvanceBatch(d);
  StartDecodeStep(d);
}

void Simulator::FinishRequest(uint32_t r, int d) {
  RequestState& s = state_[r];
  s.outcome = trace::Outcome::kCompleted;
  s.done = events_.now();
  scheduler_.OnDecodeDone(s.trace->id, d, events_.now());
}

}  // namespace mooncake::sim
