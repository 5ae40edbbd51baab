// The CUDA transformer's small kernels (transformer_kernels.h). Correctness over speed: the
// index arithmetic is kernel_layout.h's, tested on the CPU; each kernel keeps the CPU model's
// order of operations where it is cheap to (RMSNorm's double sum, RoPE's unfused products).
#include <cfloat>
#include <cmath>

#include "engine/cuda/transformer_kernels.h"

namespace mooncake::engine::cuda {
namespace {

constexpr int kRowThreads = 256;

// Every thread of the block gets the block's sum (or maximum) of `v`; `slots` holds a float per
// warp. Contains two barriers, so all threads must call it.
template <bool kMax>
__device__ float BlockReduce(float v, float* slots) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float o = __shfl_xor_sync(0xffffffffu, v, offset);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = v;
  __syncthreads();
  float r = slots[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w)
    r = kMax ? fmaxf(r, slots[w]) : r + slots[w];
  __syncthreads();
  return r;
}

__global__ void Embed(const float* embed, const int32_t* tokens, int32_t hidden, float* x) {
  const int64_t r = blockIdx.x;
  const float* from = embed + int64_t{tokens[r]} * hidden;
  for (int32_t i = threadIdx.x; i < hidden; i += blockDim.x) x[r * hidden + i] = from[i];
}

__global__ void RmsNorm(const float* x, const int32_t* row_index, int32_t n, const float* weight,
                        double eps, float* y) {
  __shared__ double slots[kRowThreads / 32];
  const int64_t r = blockIdx.x;
  const float* xr = x + (row_index ? int64_t{row_index[r]} : r) * n;
  double sum = 0;
  for (int32_t i = threadIdx.x; i < n; i += blockDim.x) sum += double(xr[i]) * xr[i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = sum;
  __syncthreads();
  double total = 0;
  for (int w = 0; w < kRowThreads / 32; ++w) total += slots[w];
  const float inv = static_cast<float>(1.0 / sqrt(total / double(n) + eps));
  for (int32_t i = threadIdx.x; i < n; i += blockDim.x) {
    y[r * n + i] = __fmul_rn(weight[i], __fmul_rn(xr[i], inv));
  }
}

// One block per row; a thread per (head, pair i of i and i + head_dim / 2) of the row's q and k
// heads, then a thread per V value.
__global__ void RopeAndStoreKv(float* qkv, QkvRow row, const int64_t* positions,
                               float* const* row_kv, KvGeometry g, int32_t layer,
                               const float* inv_freq) {
  const int64_t r = blockIdx.x;
  const int64_t position = positions[r];
  float* v = qkv + r * row.width();
  float* kv = row_kv[r];
  const int32_t half = row.head_dim / 2;
  for (int32_t j = threadIdx.x; j < (row.heads + row.kv_heads) * half; j += blockDim.x) {
    const int32_t head = j / half, i = j % half;
    const double angle = RopeAngle(position, inv_freq[i]);
    const float c = static_cast<float>(cos(angle)), s = static_cast<float>(sin(angle));
    const bool is_q = head < row.heads;
    const int64_t at = is_q ? row.Q(head, i) : row.K(head - row.heads, i);
    const float a = v[at], b = v[at + half];
    // Unfused, as the CPU model computes them (built with -ffp-contract=off).
    const float lo = __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s));
    const float hi = __fadd_rn(__fmul_rn(b, c), __fmul_rn(a, s));
    if (is_q) {
      v[at] = lo;
      v[at + half] = hi;
    } else {
      kv[g.Offset(layer, 0, head - row.heads, i, position)] = lo;
      kv[g.Offset(layer, 0, head - row.heads, i + half, position)] = hi;
    }
  }
  for (int32_t j = threadIdx.x; j < row.kv_heads * row.head_dim; j += blockDim.x) {
    const int32_t head = j / row.head_dim, d = j % row.head_dim;
    kv[g.Offset(layer, 1, head, d, position)] = v[row.V(head, d)];
  }
}

// One block per (row, query head): the context in tiles of kThreads positions, a thread per
// position for the scores (K is token-fastest, so the threads' loads are adjacent), an online
// softmax across tiles, and a thread per dim for the weighted V.
__global__ void Attention(const float* qkv, QkvRow row, const int64_t* positions,
                          const float* const* row_kv, KvGeometry g, int32_t layer, float scale,
                          float* out) {
  constexpr int32_t T = AttentionLaunch::kThreads;
  extern __shared__ float shared[];
  const int32_t hd = row.head_dim;
  float* q = shared;
  float* acc = q + hd;
  float* weight = acc + hd;
  float* slots = weight + T;
  const int64_t r = blockIdx.x;
  const int32_t head = blockIdx.y;
  const int32_t kv_head = KvHeadOf(head, row.heads, row.kv_heads);
  const float* kv = row_kv[r];
  const int64_t context = positions[r] + 1;  // causal: itself and every earlier position
  for (int32_t d = threadIdx.x; d < hd; d += T) {
    q[d] = qkv[r * row.width() + row.Q(head, d)];
    acc[d] = 0.0f;
  }
  __syncthreads();
  OnlineSoftmax softmax;  // every thread keeps the same copy: its inputs are block reductions
  for (int64_t t0 = 0; t0 < context; t0 += T) {
    const int64_t t = t0 + threadIdx.x;
    float score = -FLT_MAX;
    if (t < context) {
      float dot = 0.0f;
      for (int32_t d = 0; d < hd; ++d) dot += q[d] * kv[g.Offset(layer, 0, kv_head, d, t)];
      score = dot * scale;
    }
    const float rescale = softmax.Begin(BlockReduce<true>(score, slots));
    const float w = t < context ? expf(score - softmax.max) : 0.0f;
    weight[threadIdx.x] = w;
    softmax.sum += BlockReduce<false>(w, slots);  // its barrier publishes `weight`
    const int32_t n = static_cast<int32_t>(context - t0 < T ? context - t0 : T);
    for (int32_t d = threadIdx.x; d < hd; d += T) {
      float a = acc[d] * rescale;
      for (int32_t j = 0; j < n; ++j) a += weight[j] * kv[g.Offset(layer, 1, kv_head, d, t0 + j)];
      acc[d] = a;
    }
    __syncthreads();  // the tile's weights are read before the next tile writes them
  }
  for (int32_t d = threadIdx.x; d < hd; d += T) {
    out[r * int64_t{row.heads} * hd + int64_t{head} * hd + d] = acc[d] / softmax.sum;
  }
}

__global__ void SwiGlu(const float* gate_up, int64_t rows, int32_t ffn, float* out) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= rows * ffn) return;
  const int64_t r = i / ffn, c = i % ffn;
  const float gate = gate_up[r * 2 * ffn + c], up = gate_up[r * 2 * ffn + ffn + c];
  out[i] = gate / (1.0f + expf(-gate)) * up;
}

}  // namespace

cudaError_t LaunchEmbed(const float* embed, const int32_t* tokens, int64_t rows, int32_t hidden,
                        float* x, cudaStream_t stream) {
  Embed<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(embed, tokens, hidden, x);
  return cudaGetLastError();
}

cudaError_t LaunchRmsNorm(const float* x, const int32_t* row_index, int64_t rows, int32_t n,
                          const float* weight, double eps, float* y, cudaStream_t stream) {
  RmsNorm<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(x, row_index, n, weight, eps, y);
  return cudaGetLastError();
}

cudaError_t LaunchRopeAndStoreKv(float* qkv, QkvRow row, int64_t rows, const int64_t* positions,
                                 float* const* row_kv, KvGeometry geometry, int32_t layer,
                                 const float* inv_freq, cudaStream_t stream) {
  RopeAndStoreKv<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(
      qkv, row, positions, row_kv, geometry, layer, inv_freq);
  return cudaGetLastError();
}

cudaError_t LaunchAttention(const float* qkv, QkvRow row, int64_t rows, const int64_t* positions,
                            const float* const* row_kv, KvGeometry geometry, int32_t layer,
                            float scale, float* out, cudaStream_t stream) {
  const AttentionLaunch a = AttentionLaunchFor(rows, row.heads, row.head_dim);
  if (a.shared_bytes > kDefaultSharedBytes) return cudaErrorInvalidConfiguration;
  const dim3 grid(static_cast<unsigned>(a.grid_x), static_cast<unsigned>(a.grid_y));
  Attention<<<grid, AttentionLaunch::kThreads, a.shared_bytes, stream>>>(
      qkv, row, positions, row_kv, geometry, layer, scale, out);
  return cudaGetLastError();
}

cudaError_t LaunchSwiGlu(const float* gate_up, int64_t rows, int32_t ffn, float* out,
                         cudaStream_t stream) {
  const int64_t blocks = BlocksFor(rows * ffn, kRowThreads);
  SwiGlu<<<static_cast<unsigned>(blocks), kRowThreads, 0, stream>>>(gate_up, rows, ffn, out);
  return cudaGetLastError();
}

}  // namespace mooncake::engine::cuda
