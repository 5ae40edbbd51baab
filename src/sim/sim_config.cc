#include "sim/sim_config.h"

#include "common/enum_names.h"

#include <string>

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
  if (c.system != SystemKind::kMooncake) {
    s.colocated = true;
    s.decode_instances = s.prefill_instances;
    s.prefix_cache = c.system == SystemKind::kVllmPrefix;
    s.shared_pool = false;
    // vLLM has no SLO admission, and its router balances load: it cannot see other instances'
    // caches, so the Mooncake policies do not apply.
    s.admission = false;
    s.policy = conductor::PrefillPolicy::kLoadBalance;
  }
  return s;
}

Status ValidateSimConfig(const SimConfig& c) {
  MC_RETURN_IF_ERROR(conductor::ValidateSchedulerConfig(EffectiveSchedulerConfig(c)));
  if (!(c.load_scale > 0)) return InvalidArgument("load.scale: must be > 0");
  if (c.chunk_tokens < 0) return InvalidArgument("prefill.chunk_tokens: must be >= 0");
  if (c.system == SystemKind::kVllmChunked && c.chunk_tokens < 1) {
    return InvalidArgument("prefill.chunk_tokens: vllm_chunked needs a token budget >= 1");
  }
  return Status::Ok();
}

}  // namespace mooncake::sim
