// The index arithmetic of the CUDA transformer's kernels and cuBLAS calls, as plain functions that
// compile for the host and (under nvcc) for the device: the kernels call these, and
// tests/gpu/cuda_layout_test.cc checks them on a CPU against model/kv_cache.h and a plain
// row-major product, so the part that can be wrong without a GPU to show it is tested here.
// No CUDA header: this file is included by ordinary C++ too.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define MC_HOST_DEVICE __host__ __device__
#else
#define MC_HOST_DEVICE
#endif

namespace mooncake::engine::cuda {

// A sequence's KV on the device: its blocks one after another in one allocation, each block as
// model/kv_cache.h lays it out, [layer][K=0, V=1][kv_head][head_dim][token in block].
struct KvGeometry {
  int32_t layers = 0;
  int32_t kv_heads = 0;
  int32_t head_dim = 0;
  int32_t block_tokens = 0;

  MC_HOST_DEVICE size_t BlockFloats() const {
    return size_t(layers) * 2 * size_t(kv_heads) * size_t(head_dim) * size_t(block_tokens);
  }
  // The float of (layer, kv: 0 = K / 1 = V, kv head, dim) at sequence position `position`.
  MC_HOST_DEVICE size_t Offset(int32_t layer, int32_t kv, int32_t head, int32_t dim,
                               int64_t position) const {
    const size_t block = size_t(position / block_tokens);
    const size_t slot = size_t(position % block_tokens);
    return block * BlockFloats() +
           (((size_t(layer) * 2 + size_t(kv)) * size_t(kv_heads) + size_t(head)) *
                size_t(head_dim) +
            size_t(dim)) *
               size_t(block_tokens) +
           slot;
  }
};

// Grouped-query attention: query head `head` of `heads` reads kv head head / (heads / kv_heads).
MC_HOST_DEVICE inline int32_t KvHeadOf(int32_t head, int32_t heads, int32_t kv_heads) {
  return head / (heads / kv_heads);
}

// The fused projection q|k|v of one row: [heads x head_dim | kv_heads x head_dim | same], the
// three weights stacked as rows of one [out, in] matrix, so one GEMM computes them.
struct QkvRow {
  int32_t heads = 0;
  int32_t kv_heads = 0;
  int32_t head_dim = 0;
  MC_HOST_DEVICE int64_t width() const { return int64_t(heads + 2 * kv_heads) * head_dim; }
  MC_HOST_DEVICE int64_t Q(int32_t head, int32_t dim) const {
    return int64_t(head) * head_dim + dim;
  }
  MC_HOST_DEVICE int64_t K(int32_t kv_head, int32_t dim) const {
    return int64_t(heads + kv_head) * head_dim + dim;
  }
  MC_HOST_DEVICE int64_t V(int32_t kv_head, int32_t dim) const {
    return int64_t(heads + kv_heads + kv_head) * head_dim + dim;
  }
};

// cuBLAS's column-major GEMM arguments for the row-major product y[rows, out] = x[rows, in] W^T
// with W in nn.Linear's row-major [out, in]: column-major, y^T = W x^T, that is
// C[out, rows] = op(A)[out, in] B[in, rows] with A = W read transposed (lda = in), B = x (ldb =
// in), C = y (ldc = out).
struct GemmArgs {
  bool transpose_a = false;
  bool transpose_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
};
inline GemmArgs LinearGemm(int64_t rows, int64_t in, int64_t out) {
  return GemmArgs{true, false, out, rows, in, in, in, out};
}

// The attention kernel's launch: one thread block per (row, query head), kThreads threads; a
// tile of kThreads context positions at a time (one per thread), the head's dims spread over the
// threads. Shared memory: the query, the accumulator, the tile's weights and a reduction's slots.
struct AttentionLaunch {
  static constexpr int32_t kThreads = 128;
  static constexpr int32_t kWarps = kThreads / 32;
  int64_t grid_x = 0;  // rows (x: up to 2^31 - 1 blocks; y and z stop at 65535)
  int32_t grid_y = 0;  // query heads
  size_t shared_bytes = 0;
};
inline AttentionLaunch AttentionLaunchFor(int64_t rows, int32_t heads, int32_t head_dim) {
  AttentionLaunch a;
  a.grid_x = rows;
  a.grid_y = heads;
  a.shared_bytes =
      (size_t(2) * head_dim + AttentionLaunch::kThreads + AttentionLaunch::kWarps) * sizeof(float);
  return a;
}
// The most shared memory a block gets without opting in, on every CUDA GPU.
inline constexpr size_t kDefaultSharedBytes = 48 * 1024;

// The rotary angle of one frequency at one position, rounded to float32 as transformers computes
// it (position x inv_freq in float32); its cosine and sine are then taken in double, as the CPU
// model does (model/transformer.cc RopeTable).
MC_HOST_DEVICE inline float RopeAngle(int64_t position, float inv_freq) {
  return static_cast<float>(position) * inv_freq;
}

// The attention kernel's softmax over a context taken in tiles (online, as FlashAttention does):
// `max` is the largest score so far and `sum` the sum of e^(score - max) over the scores so far.
// Per tile: Begin(the tile's largest score) raises `max` and returns the factor by which every
// earlier sum (this one and the weighted V accumulated so far) is scaled down to the new `max`;
// then the tile's weights are e^(score - max), added to `sum` and to the weighted V. The result is
// the weighted V divided by `sum`.
struct OnlineSoftmax {
  float max = -3.402823466e38f;  // -FLT_MAX: the first tile's factor is e^(-huge) = 0
  float sum = 0.0f;
  MC_HOST_DEVICE float Begin(float tile_max) {
    const float new_max = tile_max > max ? tile_max : max;
    const float factor = expf(max - new_max);
    sum *= factor;
    max = new_max;
    return factor;
  }
};

// Blocks for an element-wise kernel over `count` items, `threads` a block.
inline int64_t BlocksFor(int64_t count, int32_t threads) { return (count + threads - 1) / threads; }

}  // namespace mooncake::engine::cuda
