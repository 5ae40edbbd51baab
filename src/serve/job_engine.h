// The compute of a serving job's prefill and decode ranks, chosen by engine.kind: the cost
// model (KV bytes from hash ids, modelled time) or the reference transformer (real KV and
// tokens, measured time), with the KV layout the job moves and stores.
#pragma once

#include <memory>
#include <optional>

#include "engine/cost_model.h"
#include "engine/engine.h"
#include "engine/engine_options.h"
#include "engine/kv_layout.h"
#include "model/transformer.h"

namespace mooncake::serve {

struct JobEngine {
  std::optional<model::Transformer> model;  // engine.kind = reference
  std::optional<engine::KvLayout> layout;
  std::unique_ptr<engine::Engine> engine;
  // The reference engine's block layout in words, for the HDF5 files' kv_layout attribute, so a
  // block read back from SSD is self-describing; empty for the cost model.
  std::string kv_layout_text;
  // The reference model's vocabulary and end-of-sequence token (HTTP completions check prompts
  // against them); 0 and -1 for the cost model.
  int32_t vocab_size = 0;
  int32_t eos_token_id = -1;
};

// Every rank builds the same layout (the store keys and block sizes must agree); the model is
// loaded where `load_model` (prefill, decode, and the conductor when it checks tokens), and with
// engine.device = cuda computes on the GPU where `on_gpu` (prefill and decode). Errors name
// engine.model or engine.device (no GPU: why, in gpu::Describe's words). The cost model's blocks
// move `kv_scale` x their real bytes and take `model_error` x its time (kv_scale,
// engine.model_error).
Result<std::unique_ptr<JobEngine>> MakeJobEngine(const engine::EngineOptions& options,
                                                 const engine::CostModel& cost, double kv_scale,
                                                 double model_error, bool load_model, bool on_gpu);

}  // namespace mooncake::serve
