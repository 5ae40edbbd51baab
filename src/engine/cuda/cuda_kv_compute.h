// The reference transformer on a CUDA GPU (engine.device = cuda): the CPU model's arithmetic
// (model/transformer.h, Hugging Face LlamaForCausalLM in float32) with its matmuls through cuBLAS
// SGEMM (float32, no TF32) and the rest in a few kernels (transformer_kernels.cu). Each
// sequence's KV lives on the device in the CPU model's block layout (model/kv_cache.h), so a
// block computed here continues on a CPU rank and back (docs/MODEL.md "On a GPU").
//
// Logits agree with the CPU model's to about 1e-6 of the largest, not bit for bit (cuBLAS sums in
// its own order, and which order may depend on the batch's rows). Built from cuda_kv_compute.cc
// and transformer_kernels.cu when CUDA was found (MOONCAKE_HAVE_CUDA), from cuda_disabled.cc
// otherwise; this header includes no CUDA header.
#pragma once

#include <memory>

#include "common/status.h"
#include "engine/kv_compute.h"
#include "model/checkpoint.h"

namespace mooncake::engine {

// The model's weights uploaded to GPU `device`. Errors: kNotSupported, saying why, when this
// build has no CUDA or the node no usable GPU (gpu::Describe's words); a CUDA or cuBLAS failure,
// named.
Result<std::unique_ptr<KvCompute>> CudaKvCompute(const model::LoadedModel& model, int device = 0);

}  // namespace mooncake::engine
