// Today's engine: compute is modelled. Prefill writes each complete block's bytes as
// KvLayout::Fill (FillBlockContent of hash id, layer and model: right size, checkable at the
// decode rank) and both calls return the cost model's time x model_error for the caller to
// sleep through, as the serving roles did before the Engine seam. No next tokens (kNoToken).
// Stateless beyond its const references: safe to call from any thread.
#pragma once

#include "engine/cost_model.h"
#include "engine/engine.h"
#include "engine/kv_layout.h"

namespace mooncake::engine {

class CostModelEngine final : public Engine {
 public:
  // `cost` and `layout` must outlive the engine. The instance computes `model_error` x the cost
  // model's time (engine.model_error), while the conductor predicts with the cost model itself.
  CostModelEngine(const CostModel& cost, const KvLayout& layout, double model_error = 1.0);

  uint64_t block_bytes() const override { return layout_.block_bytes(); }
  std::unique_ptr<KvMemory> AllocateKv(uint64_t bytes) override;
  bool models_time() const override { return true; }
  PrefillResult Prefill(const PrefillChunk& chunk) override;
  DecodeStep Decode(std::span<const DecodeSeq> batch) override;

 private:
  const CostModel& cost_;
  const KvLayout& layout_;
  double model_error_;
};

}  // namespace mooncake::engine
