// Causal attention of query vectors over a KV cache, several queries at a time (a prefill
// chunk's rows, the heads that share one kv head), each query's result the same bits as if it
// were attended alone (docs/MODEL.md "Determinism"):
//   - a score is one fused multiply-add chain over the head's dimensions, in dimension order;
//   - softmax runs per query: e^x by our own polynomial (attention_kernels.h), the sum in eight
//     lanes, position t into lane t % 8, added in one fixed tree;
//   - the weighted V of a dimension is eight fused multiply-add chains, position t into lane
//     t % 8 (the absolute position, so neither chunks nor block sizes move it), added in one
//     fixed tree at the end.
// Tiling only decides which loads are shared; no query's arithmetic depends on its neighbours.
// AVX2 + FMA kernels where the CPU has them, else portable code doing the same operations one
// lane at a time (std::fma rounds as the instruction does), so both give the same bits.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/kv_cache.h"

namespace mooncake::model {

struct AttentionQuery {
  const float* q = nullptr;  // head_dim values, rotary embedding applied
  int64_t length = 0;        // attends to positions [0, length) of the cache
  float* out = nullptr;      // head_dim values
};

enum class AttentionKernels { kBest, kPortable };

// Queries that share `cache` and kv head `kv_head` of `layer`, each with its own length.
// `scratch` is reused between calls (scores). kPortable forces the portable code (tests).
void Attend(std::span<const AttentionQuery> queries, const KvCache& cache, int32_t layer,
            int32_t kv_head, std::vector<float>* scratch,
            AttentionKernels kernels = AttentionKernels::kBest);

}  // namespace mooncake::model
