// The kernels behind the determinism guarantee (docs/MODEL.md "Determinism"): the few-rows
// matmul gives BLIS's bits, and attention gives each query the bits it has alone, with the
// AVX2 kernels and the portable code alike.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "model/attention.h"
#include "model/matmul.h"
#include "model/matmul_small.h"

namespace mooncake::model {
namespace {

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

bool SameBits(const float* a, const float* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

TEST(LinearKernels, AFewRowsGiveTheBitsOfTheSameRowsAmongMany) {
  ChooseMatmulKernels();
  const SmallRowsIsa best = BestSmallRowsIsa();
  if (best == SmallRowsIsa::kNone) GTEST_SKIP() << "no AVX2 + FMA: BLIS runs every shape";
  // On this CPU's kernel configuration the check in matmul.cc must have found the block size;
  // "BLAS" alone would mean decode steps lost the few-rows kernel without anyone noticing.
  const int64_t kc = SmallRowsBlock();
  ASSERT_GT(kc, 0) << LinearKernels() << " on " << MatmulBackend();
  // Every compilation this CPU runs gives the same bits (the AVX2 one on an AVX-512 CPU too).
  std::vector<SmallRowsIsa> isas = {SmallRowsIsa::kAvx2};
  if (best == SmallRowsIsa::kAvx512) isas.push_back(SmallRowsIsa::kAvx512);
  for (int64_t in : {64, 256, 512, 700, 1408}) {
    for (int64_t out : {16, 40, 256, 1001}) {
      const int64_t many = 40;
      const auto x = Random(many * in, 1), wt = Random(in * out, 2);
      const LinearWeight w = LinearWeight::FromInOut(wt.data(), in, out);
      std::vector<float> all(many * out), packed(many * out);
      Linear(x.data(), many, in, wt.data(), out, all.data());  // BLIS on [in, out]
      Linear(x.data(), many, w, packed.data());                // above the few rows: BLIS on a copy
      EXPECT_TRUE(SameBits(packed.data(), all.data(), all.size())) << in << " x " << out;
      for (int64_t rows : {1, 2, 3, 6, 7, 12, 13, 16}) {
        for (int64_t first : {int64_t{0}, many - rows}) {
          std::vector<float> some(rows * out);
          Linear(x.data() + first * in, rows, w, some.data());
          EXPECT_TRUE(SameBits(some.data(), all.data() + first * out, some.size()))
              << rows << " rows from row " << first << ", in " << in << ", out " << out;
          for (SmallRowsIsa isa : isas) {
            std::fill(some.begin(), some.end(), 0.0f);
            SmallRowsLinear(x.data() + first * in, rows, in, w.panels(), out, some.data(), kc, isa);
            EXPECT_TRUE(SameBits(some.data(), all.data() + first * out, some.size()))
                << SmallRowsIsaName(isa) << ": " << rows << " rows from row " << first << ", in "
                << in << ", out " << out;
          }
        }
      }
    }
  }
}

// The panel layout holds the weight: back to [in, out] and from nn.Linear's [out, in] alike.
TEST(LinearKernels, PanelLayoutRoundTrips) {
  for (int64_t out : {1, 31, 32, 33, 100}) {
    const int64_t in = 7;
    const auto wt = Random(in * out, 5);
    std::vector<float> w(out * in), back(in * out);
    for (int64_t i = 0; i < in; ++i)
      for (int64_t o = 0; o < out; ++o) w[o * in + i] = wt[i * out + o];
    LinearWeight::FromInOut(wt.data(), in, out).ToInOut(back.data());
    EXPECT_TRUE(SameBits(back.data(), wt.data(), wt.size())) << out;
    LinearWeight::FromNnLinear(w.data(), out, in).ToInOut(back.data());
    EXPECT_TRUE(SameBits(back.data(), wt.data(), wt.size())) << out;
  }
}

// Queries of one kv head at consecutive positions (a prefill chunk's rows, two heads each):
// attended four at a time, two at a time (a decode step's heads of one kv head), one at a time,
// and by the portable code, the same bits. Blocks of 64 and more tokens take the scores of one
// or two queries a row of K at a time (attention.cc), shorter ones 16 positions of two places.
TEST(AttentionKernels, EachQueryGetsTheBitsItHasAlone) {
  for (int32_t block_tokens : {3, 8, 16, 37, 64, 72, 128}) {
    const KvShape shape{2, 2, 24, block_tokens};
    KvCache cache(shape);
    const int64_t tokens = 90;
    cache.Grow(tokens);
    uint32_t seed = 7;
    for (size_t b = 0; b < cache.num_blocks(); ++b) {
      auto block = cache.mutable_block(b);
      const auto values = Random(block.size(), seed++);
      std::copy(values.begin(), values.end(), block.begin());
    }
    const int64_t first = 61;  // rows at positions 61..89, two heads each
    const int64_t n = (tokens - first) * 2;
    const auto q = Random(n * shape.head_dim, 3);
    std::vector<float> together(n * shape.head_dim), alone(together.size()), two(together.size()),
        portable(together.size()), scratch;
    std::vector<AttentionQuery> queries;
    for (int64_t i = 0; i < n; ++i) {
      queries.push_back(
          {q.data() + i * shape.head_dim, first + i / 2 + 1, together.data() + i * shape.head_dim});
    }
    Attend(queries, cache, 1, 1, &scratch);
    for (int64_t i = 0; i < n; i += 2) {
      AttentionQuery pair[2] = {queries[i], queries[i + 1]};
      pair[0].out = two.data() + i * shape.head_dim;
      pair[1].out = two.data() + (i + 1) * shape.head_dim;
      Attend(pair, cache, 1, 1, &scratch);
    }
    for (int64_t i = 0; i < n; ++i) {
      AttentionQuery one = queries[i];
      one.out = alone.data() + i * shape.head_dim;
      Attend({&one, 1}, cache, 1, 1, &scratch);
      one.out = portable.data() + i * shape.head_dim;
      Attend({&one, 1}, cache, 1, 1, &scratch, AttentionKernels::kPortable);
    }
    EXPECT_TRUE(SameBits(together.data(), alone.data(), together.size())) << block_tokens;
    EXPECT_TRUE(SameBits(together.data(), two.data(), together.size())) << block_tokens;
    EXPECT_TRUE(SameBits(together.data(), portable.data(), together.size())) << block_tokens;
  }
}

}  // namespace
}  // namespace mooncake::model
