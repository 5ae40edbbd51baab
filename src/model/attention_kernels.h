// The two compilations of attention_kernels.inl (attention.h says what they compute).
#pragma once

#include <cstdint>

#include "model/kv_cache.h"

namespace mooncake::model {

struct AttentionKernelSet {
  // score[i][t] for t in [from, to) of one block; `keys` is that block's K of (layer, kv head),
  // dimension d's positions at keys + d * bt. At most four queries.
  void (*scores)(const float* const* q, int nq, int32_t head_dim, const float* keys, int64_t bt,
                 int64_t from, int64_t to, float* const* score);
  // The same scores for one or two queries at 16 positions in each of two places: `ka` and `kb`
  // point at a place's first position (dimension d's at + d * bt), `sa` and `sb` at its scores.
  void (*scores_pair)(const float* const* q, int nq, int32_t head_dim, const float* ka,
                      const float* kb, int64_t bt, float* const* sa, float* const* sb);
  // The same scores for one or two queries at the positions [0, n) of one block, read a row of
  // K (a dimension) at a time; `score` as `scores`'. The block's V (`values`, the same shape)
  // is prefetched meanwhile.
  void (*scores_rows)(const float* const* q, int nq, int32_t head_dim, const float* keys,
                      const float* values, int64_t bt, int64_t n, float* const* score);
  // Scores to probabilities in place: scaled, e^(s - max), divided by their sum (eight lanes,
  // position t into lane t % 8, added in one fixed tree). `s` has room for whole vectors.
  void (*softmax)(float* s, int64_t n, float scale);
  // out[i][d] = sum over t < length[i] of p[i][t] * V[d][t]. At most four queries.
  void (*weighted_v)(const float* const* p, const int64_t* length, int nq, const KvCache& cache,
                     int32_t layer, int32_t kv_head, float* const* out);
};

// e^x as both compilations compute it (softmax's x = score - max <= 0): clamped at -80 (e^-80
// is 2e-35, nothing beside the maximum's 1), x = n ln 2 + r, e^r by a degree-6 Taylor
// polynomial in fused multiply-adds (|r| <= ln 2 / 2: relative error about 1e-7), times 2^n.
inline constexpr float kExpFloor = -80.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kRoundMagic = 12582912.0f;  // 1.5 x 2^23: adding it rounds to an integer
inline constexpr float kLn2Hi = 0.693359375f;      // ln 2 = hi + lo, hi with few bits
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr int kExpPolyTerms = 7;
inline constexpr float kExpPoly[kExpPolyTerms] = {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6,
                                                  0.5f,       1.0f,       1.0f};

namespace attention_avx2 {
extern const AttentionKernelSet kKernels;  // only where the CPU has AVX2 and FMA
}
namespace attention_portable {
extern const AttentionKernelSet kKernels;
}

}  // namespace mooncake::model
