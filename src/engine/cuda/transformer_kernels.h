// Internal to engine/cuda: the launchers of transformer_kernels.cu, the CUDA transformer's steps
// other than its matmuls (cuBLAS). Every pointer is device memory; rows are the forward pass's
// tokens, each with its position in its sequence and its sequence's KV (kernel_layout.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/cuda/kernel_layout.h"

namespace mooncake::engine::cuda {

// x[r] = embed[tokens[r]], rows of `hidden` floats.
cudaError_t LaunchEmbed(const float* embed, const int32_t* tokens, int64_t rows, int32_t hidden,
                        float* x, cudaStream_t stream);

// y[r] = x[row_index[r]] / sqrt(mean(x^2) + eps) * weight (the sum of squares in double, as the
// CPU model); row_index null: row r of x.
cudaError_t LaunchRmsNorm(const float* x, const int32_t* row_index, int64_t rows, int32_t n,
                          const float* weight, double eps, float* y, cudaStream_t stream);

// Rotary embedding of every q and k head of the rows' fused q|k|v (q in place), then the rows'
// K (rotated) and V written into their sequences' KV at their positions, layer `layer`.
cudaError_t LaunchRopeAndStoreKv(float* qkv, QkvRow row, int64_t rows, const int64_t* positions,
                                 float* const* row_kv, KvGeometry geometry, int32_t layer,
                                 const float* inv_freq, cudaStream_t stream);

// Causal grouped-query attention: row r's query head h attends over its sequence's positions
// 0 .. positions[r] (the cached prefix, and the chunk's KV stored by LaunchRopeAndStoreKv), kv
// head KvHeadOf(h); out[r, h x head_dim + d].
cudaError_t LaunchAttention(const float* qkv, QkvRow row, int64_t rows, const int64_t* positions,
                            const float* const* row_kv, KvGeometry geometry, int32_t layer,
                            float scale, float* out, cudaStream_t stream);

// out[r, i] = silu(gate) x up, from gate_up rows [gate (ffn floats) | up (ffn floats)].
cudaError_t LaunchSwiGlu(const float* gate_up, int64_t rows, int32_t ffn, float* out,
                         cudaStream_t stream);

}  // namespace mooncake::engine::cuda
