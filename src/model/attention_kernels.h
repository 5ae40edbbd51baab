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
  // out[i][d] = sum over t < length[i] of p[i][t] * V[d][t]. At most four queries.
  void (*weighted_v)(const float* const* p, const int64_t* length, int nq, const KvCache& cache,
                     int32_t layer, int32_t kv_head, float* const* out);
};

namespace attention_avx2 {
extern const AttentionKernelSet kKernels;  // only where the CPU has AVX2 and FMA
}
namespace attention_portable {
extern const AttentionKernelSet kKernels;
}

}  // namespace mooncake::model
