#include "sim/sim_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "common/enum_names.h"

namespace mooncake::sim {

namespace {
constexpr EnumName<SystemKind> kSystems[] = {{SystemKind::kMooncake, "mooncake"},
                                             {SystemKind::kVllm, "vllm"},
                                             {SystemKind::kVllmPrefix, "vllm_prefix"},
                                             {SystemKind::kVllmChunked, "vllm_chunked"}};
}  // namespace

Result<SystemKind> ParseSystemKind(std::string_view name) {
  return ParseIn(kSystems, name, "system");
}
const char* SystemKindName(SystemKind s) { return NameIn(kSystems, s); }

conductor::SchedulerConfig EffectiveSchedulerConfig(const SimConfig& c) {
  conductor::SchedulerConfig s = c.scheduler;
  s.prefill_chunk_tokens = c.chunk_tokens;
  if (c.system != SystemKind::kMooncake) {
    s.colocated = true;
    s.decode_instances = s.prefill_instances;
    s.prefix_cache = c.system == SystemKind::kVllmPrefix;
    s.shared_pool = false;
    // vLLM has no SLO admission, and its router balances load: it cannot see other instances'
    // caches, so the Mooncake policies do not apply.
    s.admission = false;
    s.policy = conductor::PrefillPolicy::kLoadBalance;
    s.prefill_chunk_tokens = 0;
  }
  return s;
}

Result<VllmLimits> EffectiveVllmLimits(const SimConfig& c, const engine::ModelSpec& model) {
  VllmLimits v = c.vllm;
  const bool chunked = c.system == SystemKind::kVllmChunked;
  if (v.max_model_len == 0) v.max_model_len = model.max_context;
  if (v.max_model_len <= 0) {
    return InvalidArgument(
        fmt::format("vllm.max_model_len = auto: model preset '{}' states no max_context; give "
                    "vllm.max_model_len",
                    model.name));
  }
  // vllm/config.py SchedulerConfig: 512 with chunked prefill, else max(max_model_len, 2048).
  if (v.max_num_batched_tokens == 0) {
    v.max_num_batched_tokens = chunked ? 512 : std::max<int64_t>(v.max_model_len, 2048);
  }
  // SchedulerConfig._verify_args refuses these.
  if (v.max_num_batched_tokens < v.max_num_seqs) {
    return InvalidArgument(
        fmt::format("vllm.max_num_batched_tokens = {}: vLLM needs it >= vllm.max_num_seqs ({})",
                    v.max_num_batched_tokens, v.max_num_seqs));
  }
  if (!chunked && v.max_num_batched_tokens < v.max_model_len) {
    return InvalidArgument(
        fmt::format("vllm.max_num_batched_tokens = {}: without chunked prefill vLLM needs it >= "
                    "vllm.max_model_len ({})",
                    v.max_num_batched_tokens, v.max_model_len));
  }
  return v;
}

Status ValidateSimConfig(const SimConfig& c) {
  MC_RETURN_IF_ERROR(conductor::ValidateSchedulerConfig(EffectiveSchedulerConfig(c)));
  if (!(c.load_scale > 0)) return InvalidArgument("load.scale: must be > 0");
  if (c.chunk_tokens < 0) return InvalidArgument("prefill.chunk_tokens: must be >= 0");
  if (c.system != SystemKind::kMooncake && c.chunk_tokens > 0) {
    return InvalidArgument(
        fmt::format("prefill.chunk_tokens = {}: Mooncake's prefill chunk; system {} steps under "
                    "vllm.max_num_batched_tokens instead",
                    c.chunk_tokens, SystemKindName(c.system)));
  }
  if (c.vllm.max_num_batched_tokens < 0) {
    return InvalidArgument("vllm.max_num_batched_tokens: must be > 0 (or auto)");
  }
  if (c.vllm.max_num_seqs < 1) return InvalidArgument("vllm.max_num_seqs: must be >= 1");
  if (c.vllm.max_model_len < 0) return InvalidArgument("vllm.max_model_len: must be > 0 (or auto)");
  const StoreMasterModel& s = c.store;
  if (s.ranks > 0) {
    if (s.block_bytes == 0 || s.rank_bytes < s.block_bytes) {
      return InvalidArgument(
          fmt::format("store.dram = {} B: a store rank must hold at least one KV block of {} B",
                      s.rank_bytes, s.block_bytes));
    }
    if (s.replicas < 1 || s.replicas > static_cast<uint32_t>(s.ranks)) {
      return InvalidArgument(
          fmt::format("store.replicas = {}: allowed 1 to the {} store ranks", s.replicas, s.ranks));
    }
  }
  return Status::Ok();
}

}  // namespace mooncake::sim
