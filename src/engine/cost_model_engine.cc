#include "engine/cost_model_engine.h"

#include <chrono>

namespace mooncake::engine {

CostModelEngine::CostModelEngine(const CostModel& cost, const KvLayout& layout, double model_error)
    : cost_(cost), layout_(layout), model_error_(model_error) {}

std::unique_ptr<KvMemory> CostModelEngine::AllocateKv(uint64_t bytes) {
  return std::make_unique<HostKvMemory>(bytes);
}

PrefillResult CostModelEngine::Prefill(const PrefillChunk& c) {
  // Truncated to whole nanoseconds after scaling, as the prefill role always did.
  const Nanos t = std::chrono::duration_cast<Nanos>(
      cost_.PrefillChunkTime(c.prefix_tokens, c.tokens) * model_error_);
  const uint64_t bb = layout_.block_bytes();
  for (int b = c.first_block; b < c.end_block; ++b) {
    layout_.Fill(c.hash_ids[b], c.kv.subspan(b * bb, bb));
  }
  return {{t, true}, kNoToken, {}};
}

DecodeStep CostModelEngine::Decode(std::span<const DecodeSeq> batch) {
  int64_t context = 0;
  for (const DecodeSeq& s : batch) context += s.context_tokens;
  const Nanos t = std::chrono::duration_cast<Nanos>(
      cost_.DecodeStepTime(static_cast<int64_t>(batch.size()), context) * model_error_);
  return {{t, true}, std::vector<int32_t>(batch.size(), kNoToken), {}};
}

}  // namespace mooncake::engine
