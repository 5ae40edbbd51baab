// What the simulator models: the system (Mooncake's disaggregated layout or a vLLM-like
// baseline), the scheduler's config, chunking, load scaling, vLLM's scheduler limits and the
// store's metadata master.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "conductor/scheduler.h"
#include "engine/cost_model.h"
#include "store/master.h"
#include "trace/metrics.h"

namespace mooncake::sim {

enum class SystemKind : uint8_t {
  kMooncake,     // separate prefill and decode pools with the global KV cache
  kVllm,         // colocated: a prefill step stalls the decode of the whole batch
  kVllmPrefix,   // kVllm plus a local prefix cache per instance
  kVllmChunked,  // colocated, prefill chunks mixed into decode steps under a token budget
};
Result<SystemKind> ParseSystemKind(std::string_view name);
const char* SystemKindName(SystemKind s);

// vLLM 0.5's scheduler limits (vllm/config.py SchedulerConfig, vllm/engine/arg_utils.py); 0
// means vLLM's default, resolved by EffectiveVllmLimits.
struct VllmLimits {
  // Tokens one step may process (prompt tokens of the prefills + one per decode). Default: 512
  // with chunked prefill, else max(max_model_len, 2048).
  int64_t max_num_batched_tokens = 0;
  int64_t max_num_seqs = 256;  // sequences running at once (vLLM's default)
  // Longest sequence served; a longer prompt is ignored (rejected). Default: the model's
  // max_context.
  int64_t max_model_len = 0;
};

// The store's metadata master (store/master.h), run on the virtual clock for the Mooncake
// system: prefills read their prefix from it and put the blocks they compute, as the live
// prefill role does; what it evicted is recomputed. Off when ranks == 0.
struct StoreMasterModel {
  int ranks = 0;                 // store segments (store ranks, or the pool's nodes)
  uint64_t rank_bytes = 0;       // capacity of each segment
  uint64_t block_bytes = 0;      // bytes of one KV block as the store holds it
  uint32_t replicas = 1;         // per put, on distinct segments
  store::MasterConfig master{};  // lease (model time), watermark, eviction batch
};

struct SimConfig {
  SystemKind system = SystemKind::kMooncake;
  // For vLLM kinds, scheduler.prefill_instances is the number of instances; the simulator sets
  // colocated, load_balance routing, no admission, and (for kVllm, kVllmChunked) no prefix cache.
  conductor::SchedulerConfig scheduler;
  // Mooncake: prefill chunk size (new blocks are stored after each chunk); 0 = one pass.
  // Refused for the vLLM kinds, whose step budget is vllm.max_num_batched_tokens.
  int64_t chunk_tokens = 0;
  double load_scale = 1.0;  // arrival times are divided by this (2 = twice the load)
  trace::Thresholds thresholds;
  VllmLimits vllm;
  StoreMasterModel store;
};

Status ValidateSimConfig(const SimConfig& config);
// The scheduler config the simulator really runs for `config.system`.
conductor::SchedulerConfig EffectiveSchedulerConfig(const SimConfig& config);
// vLLM's limits with the defaults filled in from `model`; an error names the option when a
// default cannot be derived or vLLM would refuse the values.
Result<VllmLimits> EffectiveVllmLimits(const SimConfig& config, const engine::ModelSpec& model);

}  // namespace mooncake::sim
