#include "model/attention.h"

#include <algorithm>
#include <cmath>

#include "model/attention_kernels.h"
#include "model/cpu_features.h"

namespace mooncake::model {
namespace {

constexpr int kTile = 4;      // queries that share their loads of K and V
constexpr int64_t kPad = 16;  // the kernels write whole vectors of scores

bool HasAvx2Fma() {
  static const bool has = CpuHasAvx2Fma();
  return has;
}

void AttendTile(const AttentionKernelSet& k, std::span<const AttentionQuery> tile,
                const KvCache& cache, int32_t layer, int32_t kv_head, std::vector<float>* scratch) {
  const KvShape& shape = cache.shape();
  const int64_t bt = shape.block_tokens;
  const int nq = static_cast<int>(tile.size());
  int64_t longest = 0;
  for (const AttentionQuery& a : tile) longest = std::max(longest, a.length);
  const int64_t stride = (longest + kPad - 1) / kPad * kPad + kPad;
  if (scratch->size() < size_t(stride) * kTile) scratch->resize(size_t(stride) * kTile);
  const float* q[kTile];
  float* score[kTile];
  float* out[kTile];
  int64_t length[kTile];
  for (int i = 0; i < nq; ++i) {
    q[i] = tile[i].q;
    score[i] = scratch->data() + i * stride;
    out[i] = tile[i].out;
    length[i] = tile[i].length;
  }
  // Scores of every query up to the longest: a shorter one's extra scores are never read.
  for (int64_t start = 0; start < longest; start += bt) {
    const float* keys = cache.block(start / bt).data() + shape.Index(layer, 0, kv_head, 0, 0);
    float* at[kTile];
    for (int i = 0; i < nq; ++i) at[i] = score[i] + start;
    k.scores(q, nq, shape.head_dim, keys, bt, 0, std::min(bt, longest - start), at);
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
  for (int i = 0; i < nq; ++i) k.softmax(score[i], length[i], scale);
  k.weighted_v(score, length, nq, cache, layer, kv_head, out);
}

}  // namespace

void Attend(std::span<const AttentionQuery> queries, const KvCache& cache, int32_t layer,
            int32_t kv_head, std::vector<float>* scratch, AttentionKernels kernels) {
  const AttentionKernelSet& k = kernels == AttentionKernels::kBest && HasAvx2Fma()
                                    ? attention_avx2::kKernels
                                    : attention_portable::kKernels;
  for (size_t first = 0; first < queries.size(); first += kTile) {
    const size_t n = std::min<size_t>(kTile, queries.size() - first);
    AttendTile(k, queries.subspan(first, n), cache, layer, kv_head, scratch);
  }
}

}  // namespace mooncake::model
