// Turns the simulator's per-request state into records and the run summary.
#include <algorithm>

#include "sim/simulator_impl.h"

namespace mooncake::sim {

using engine::NanosToSeconds;

SimResult Simulator::Collect() {
  SimResult out;
  out.records.reserve(state_.size());
  Nanos first{0}, last{0};
  for (size_t i = 0; i < state_.size(); ++i) {
    const RequestState& s = state_[i];
    trace::RequestRecord rec;
    rec.id = s.trace->id;
    rec.arrival_s = NanosToSeconds(s.arrival);
    rec.outcome = s.outcome;
    rec.reject_reason = s.reason;
    rec.prefilled = s.prefilled;
    rec.prefill_instance = s.decision.prefill;
    rec.decode_instance = s.decision.decode;
    rec.input_tokens = s.trace->input_length;
    rec.output_tokens = s.trace->output_length;
    rec.blocks = static_cast<int32_t>(s.trace->hash_ids.size());
    rec.prefix_blocks_hit = s.prefix_blocks_hit;
    rec.inflight_miss_blocks = s.decision.inflight_miss_blocks;
    if (s.first_token >= Nanos(0)) rec.ttft_s = NanosToSeconds(s.first_token - s.arrival);
    if (s.outcome == trace::Outcome::kCompleted) {
      rec.tbt_s = s.tbt.Tbt();
      rec.e2e_s = NanosToSeconds(s.done - s.arrival);
    }
    rec.prefill_compute_s = s.prefill_compute_s;
    if (s.decision.accepted) rec.ttft_predicted_s = NanosToSeconds(s.decision.predicted_ttft);
    out.records.push_back(std::move(rec));
    if (i == 0 || s.arrival < first) first = s.arrival;
    last = std::max(last, s.done);
  }
  out.summary = trace::Summarize(out.records, config_.thresholds);
  out.events = events_.pushed();
  out.model_span_s = NanosToSeconds(last - first);
  auto& x = out.summary.extra;
  // Named as the live job names them (bytes_prefill_to_decode): one scheme in every summary.
  for (const auto& [plane, bytes] : bytes_) x["bytes_" + plane] = bytes;
  x["scheduler_accepted"] = static_cast<double>(scheduler_.accepted());
  x["scheduler_fetches"] = static_cast<double>(scheduler_.fetches());
  x["scheduler_fetched_blocks"] = static_cast<double>(scheduler_.fetched_blocks());
  x["store_occupancy_blocks"] = static_cast<double>(scheduler_.index().Occupancy());
  x["store_evicted_blocks"] = static_cast<double>(scheduler_.index().evictions());
  if (store_) {
    // As the live job names them (serve/summary.cc).
    const StoreSimStats& st = store_->stats();
    const store::MasterStats ms = store_->master_stats();
    x["prefix_blocks_loaded_from_store"] = static_cast<double>(st.get_hits);
    x["prefix_blocks_missing_in_store"] = static_cast<double>(st.get_misses);
    x["store_objects"] = static_cast<double>(ms.objects);
    x["store_evicted_replicas"] = static_cast<double>(ms.evicted_replicas);
    x["store_put_failures"] = static_cast<double>(st.put_failures);
    x["store_used_bytes"] = static_cast<double>(store_->used_bytes());
  }
  if (config_.system != SystemKind::kMooncake) {
    x["vllm_prefill_steps"] = static_cast<double>(prefill_steps_);
    x["vllm_prompt_chunks_per_prefill_step"] =
        prefill_steps_ ? static_cast<double>(prefill_step_chunks_) / prefill_steps_ : 0.0;
  }
  x["sim_events"] = static_cast<double>(out.events);
  x["sim_model_span_s"] = out.model_span_s;
  return out;
}

Result<SimResult> RunSimulation(const SimConfig& config, const engine::CostModel& cost,
                                const std::vector<trace::TraceRequest>& requests,
                                const SimHooks& hooks) {
  MC_RETURN_IF_ERROR(ValidateSimConfig(config));
  VllmLimits vllm = config.vllm;
  if (config.system != SystemKind::kMooncake) {
    Result<VllmLimits> v = EffectiveVllmLimits(config, cost.model());
    if (!v.ok()) return v.status();
    vllm = *v;
  }
  Simulator sim(config, vllm, cost, requests, hooks);
  return sim.Run();
}

}  // namespace mooncake::sim
