#include "serve/job_engine.h"

#include <fmt/format.h>

#include "engine/cost_model_engine.h"
#include "engine/cuda/cuda_kv_compute.h"
#include "engine/reference_engine.h"
#include "model/checkpoint.h"
#include "trace/trace_request.h"

namespace mooncake::serve {

Result<std::unique_ptr<JobEngine>> MakeJobEngine(const engine::EngineOptions& o,
                                                 const engine::CostModel& cost, double kv_scale,
                                                 double model_error, bool load_model, bool on_gpu) {
  auto job = std::make_unique<JobEngine>();
  if (!o.reference) {
    job->layout.emplace(cost, kv_scale, cost.model().name);
    job->engine = std::make_unique<engine::CostModelEngine>(cost, *job->layout, model_error);
    return job;
  }
  // The layout needs only the model's shape; its weights are loaded where they compute. A
  // preset's shape is cheap to build, a checkpoint's is read from its config.json, so every
  // rank loads the model: a rank whose copy failed says so before the replay.
  auto loaded = model::LoadModel(o.model, o.seed);
  if (!loaded.ok()) return loaded.status().WithContext("engine.model = " + o.model);
  // engine.device = cuda: the weights go to the GPU too (the CPU model stays for the token check).
  std::unique_ptr<engine::KvCompute> gpu;
  if (load_model && on_gpu && o.cuda) {
    auto compute = engine::CudaKvCompute(*loaded);
    if (!compute.ok()) return compute.status().WithContext("engine.device = cuda");
    gpu = std::move(*compute);
  }
  auto transformer = model::Transformer::Create(std::move(*loaded));
  if (!transformer.ok()) {
    return transformer.status().WithContext("engine.model = " + o.model);
  }
  const model::KvShape shape = transformer->KvShapeFor(trace::kTraceBlockTokens);
  job->vocab_size = transformer->config().vocab_size;
  job->eos_token_id = transformer->config().eos_token_id;
  std::string name = transformer->config().name;
  if (auto slash = name.find_last_of('/'); slash != std::string::npos && slash + 1 < name.size()) {
    name = name.substr(slash + 1);  // a checkpoint folder: its last component
  }
  // Keys of another model or seed never match: KV is only reused by the same weights.
  job->layout.emplace(engine::KvLayout::Computed(shape.BlockBytes(),
                                                 static_cast<uint32_t>(shape.layers),
                                                 fmt::format("ref-{}-seed{}", name, o.seed)));
  job->kv_layout_text = fmt::format(
      "float32 [layer][K=0,V=1][kv_head][head_dim][token]: layers {}, kv_heads {}, head_dim {}, "
      "tokens per block {}",
      shape.layers, shape.kv_heads, shape.head_dim, shape.block_tokens);
  if (!load_model) return job;
  job->model.emplace(std::move(*transformer));
  job->engine = gpu ? std::make_unique<engine::ReferenceEngine>(std::move(gpu))
                    : std::make_unique<engine::ReferenceEngine>(*job->model);
  return job;
}

}  // namespace mooncake::serve
