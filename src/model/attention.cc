#include "model/attention.h"

#include <algorithm>
#include <cmath>

#include "model/attention_kernels.h"
#include "model/cpu_features.h"

namespace mooncake::model {
namespace {

constexpr int kTile = 4;        // queries that share their loads of K and V
constexpr int64_t kPad = 16;    // the kernels write whole vectors of scores
constexpr int64_t kPlace = 16;  // positions of one place of scores_pair
// Blocks of at least this many tokens: K read a row at a time, and no prefetching (the
// hardware's prefetchers follow rows this long).
constexpr int64_t kLongRows = 64;
// Short blocks' K and V are asked for this many tokens ahead of the scores.
constexpr int64_t kAheadTokens = 64;

bool HasAvx2Fma() {
  static const bool has = CpuHasAvx2Fma();
  return has;
}

// Asks for `floats` floats from `p` on toward the caches (a hint: no arithmetic changes).
void Prefetch(const float* p, int64_t floats) {
  for (int64_t i = 0; i < floats; i += 16) __builtin_prefetch(p + i);
}

// `prefetch`: while scoring a block, ask for the next block's K and this block's V. A head's K
// and V of one block are hd x block_tokens floats each, a block of all layers apart (256 KiB
// for `small` at 16 tokens), which the hardware's prefetchers do not follow from block to
// block; the first tile of a call brings them into the caches for the rest.
void AttendTile(const AttentionKernelSet& k, std::span<const AttentionQuery> tile,
                const KvCache& cache, int32_t layer, int32_t kv_head, std::vector<float>* scratch,
                bool prefetch) {
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
  // Scores of every query up to the longest: a shorter one's extra scores are never read. One
  // or two queries (a decode step's heads of one kv head) go 16 positions of two places at
  // once, from one block or two (scores_pair); `held` is a place waiting for its partner.
  const int64_t region = int64_t{shape.head_dim} * bt;
  const int64_t blocks = (longest + bt - 1) / bt;
  int64_t fetched = 0;  // blocks whose K and V were asked for
  const bool pairs = nq <= 2;
  const float* held_keys = nullptr;
  float* held_at[kTile] = {};
  for (int64_t start = 0; start < longest; start += bt) {
    const float* keys = cache.block(start / bt).data() + shape.Index(layer, 0, kv_head, 0, 0);
    for (;
         prefetch && bt < kLongRows && fetched < blocks && fetched * bt < start + bt + kAheadTokens;
         ++fetched) {
      Prefetch(cache.block(fetched).data() + shape.Index(layer, 0, kv_head, 0, 0), region);
      Prefetch(cache.block(fetched).data() + shape.Index(layer, 1, kv_head, 0, 0), region);
    }
    const int64_t n = std::min(bt, longest - start);
    if (pairs && bt >= kLongRows) {
      float* at[kTile];
      for (int i = 0; i < nq; ++i) at[i] = score[i] + start;
      k.scores_rows(q, nq, shape.head_dim, keys, keys + region * shape.kv_heads, bt, n, at);
      continue;
    }
    int64_t t = 0;
    for (; pairs && t + kPlace <= n; t += kPlace) {
      float* at[kTile];
      for (int i = 0; i < nq; ++i) at[i] = score[i] + start + t;
      if (held_keys == nullptr) {
        held_keys = keys + t;
        std::copy_n(at, nq, held_at);
      } else {
        k.scores_pair(q, nq, shape.head_dim, held_keys, keys + t, bt, held_at, at);
        held_keys = nullptr;
      }
    }
    float* at[kTile];
    for (int i = 0; i < nq; ++i) at[i] = score[i] + start;
    k.scores(q, nq, shape.head_dim, keys, bt, t, n, at);
  }
  if (held_keys != nullptr) {  // the last place alone, as one block of kPlace positions
    k.scores(q, nq, shape.head_dim, held_keys, bt, 0, kPlace, held_at);
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
    AttendTile(k, queries.subspan(first, n), cache, layer, kv_head, scratch, first == 0);
  }
}

}  // namespace mooncake::model
