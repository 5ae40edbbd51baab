// What the simulator models: the system (Mooncake's disaggregated layout or a vLLM-like
// baseline), the scheduler's config, chunking and load scaling.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "conductor/scheduler.h"
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

struct SimConfig {
  SystemKind system = SystemKind::kMooncake;
  // For vLLM kinds, scheduler.prefill_instances is the number of instances; the simulator sets
  // colocated, load_balance routing, no admission, and (for kVllm, kVllmChunked) no prefix cache.
  conductor::SchedulerConfig scheduler;
  // Mooncake: prefill chunk size (new blocks are stored after each chunk); 0 = one pass.
  // kVllmChunked: the token budget of one step (decode tokens + prefill chunk).
  int64_t chunk_tokens = 0;
  double load_scale = 1.0;  // arrival times are divided by this (2 = twice the load)
  trace::Thresholds thresholds;
};

Status ValidateSimConfig(const SimConfig& config);
// The scheduler config the simulator really runs for `config.system`.
conductor::SchedulerConfig EffectiveSchedulerConfig(const SimConfig& config);

}  // namespace mooncake::sim
