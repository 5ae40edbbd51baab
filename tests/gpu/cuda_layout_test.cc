// The CUDA transformer's index arithmetic (engine/cuda/kernel_layout.h), checked on a CPU: the
// kernels' KV offsets are model/kv_cache.h's layout, the GQA head map is the CPU model's, the
// fused q|k|v offsets pick each projection out of one product, and the cuBLAS arguments compute
// the row-major y = x W^T (run here through a plain column-major GEMM with cuBLAS's contract).
// And without a GPU, asking for the CUDA model is an error that says why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "engine/cuda/cuda_kv_compute.h"
#include "engine/cuda/kernel_layout.h"
#include "gpu/gpu.h"
#include "model/checkpoint.h"
#include "model/kv_cache.h"

namespace mooncake::engine::cuda {
namespace {

TEST(CudaLayout, KvOffsetIsTheCpuCachesBlockLayout) {
  const model::KvShape shape{3, 2, 6, 5};
  const KvGeometry g{shape.layers, shape.kv_heads, shape.head_dim, shape.block_tokens};
  EXPECT_EQ(g.BlockFloats(), shape.BlockFloats());
  std::set<size_t> seen;
  const int64_t positions = 3 * shape.block_tokens + 2;
  for (int32_t l = 0; l < shape.layers; ++l) {
    for (int32_t kv = 0; kv < 2; ++kv) {
      for (int32_t h = 0; h < shape.kv_heads; ++h) {
        for (int32_t d = 0; d < shape.head_dim; ++d) {
          for (int64_t p = 0; p < positions; ++p) {
            const size_t block = size_t(p / shape.block_tokens);
            const auto slot = static_cast<int32_t>(p % shape.block_tokens);
            ASSERT_EQ(g.Offset(l, kv, h, d, p),
                      block * shape.BlockFloats() + shape.Index(l, kv, h, d, slot))
                << l << " " << kv << " " << h << " " << d << " " << p;
            seen.insert(g.Offset(l, kv, h, d, p));
          }
        }
      }
    }
  }
  // Every float of the blocks is one (layer, K/V, head, dim, position): nothing overlaps.
  EXPECT_EQ(seen.size(), shape.BlockFloats() / shape.block_tokens * positions);
}

TEST(CudaLayout, QueryHeadsReadTheirGroupsKvHead) {
  // The CPU model: kv head g serves query heads [g x group, (g + 1) x group).
  for (auto [heads, kv_heads] : {std::pair{4, 2}, {8, 4}, {8, 1}, {6, 6}, {32, 8}}) {
    const int32_t group = heads / kv_heads;
    for (int32_t g = 0; g < kv_heads; ++g) {
      for (int32_t h = g * group; h < (g + 1) * group; ++h) {
        EXPECT_EQ(KvHeadOf(h, heads, kv_heads), g) << heads << "/" << kv_heads << " head " << h;
      }
    }
  }
}

// cuBLAS's sgemm contract on column-major arrays: C = alpha op(A) op(B) + beta C, with
// op(A) m x k, op(B) k x n, C m x n, element (i, j) of a column-major X at X[i + j * ld].
void ColumnMajorSgemm(const GemmArgs& a, const float* A, const float* B, float beta, float* C) {
  for (int64_t i = 0; i < a.m; ++i) {
    for (int64_t j = 0; j < a.n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < a.k; ++p) {
        const float av = a.transpose_a ? A[p + i * a.lda] : A[i + p * a.lda];
        const float bv = a.transpose_b ? B[j + p * a.ldb] : B[p + j * a.ldb];
        sum += double(av) * bv;
      }
      C[i + j * a.ldc] = static_cast<float>(sum + beta * C[i + j * a.ldc]);
    }
  }
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// y[rows, out] = x[rows, in] W^T, W [out, in], all row-major, plus beta y.
std::vector<float> RowMajorLinear(const std::vector<float>& x, int64_t rows, int64_t in,
                                  const std::vector<float>& w, int64_t out, float beta,
                                  std::vector<float> y) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double sum = 0;
      for (int64_t i = 0; i < in; ++i) sum += double(x[r * in + i]) * w[o * in + i];
      y[r * out + o] = static_cast<float>(sum + beta * y[r * out + o]);
    }
  }
  return y;
}

TEST(CudaLayout, GemmArgumentsComputeTheRowMajorLinearLayer) {
  for (auto [rows, in, out] : {std::tuple{1, 5, 3}, {7, 16, 9}, {4, 3, 11}}) {
    const std::vector<float> x = Random(size_t(rows) * in, 1), w = Random(size_t(out) * in, 2);
    for (float beta : {0.0f, 1.0f}) {
      const std::vector<float> y0 = Random(size_t(rows) * out, 3);
      std::vector<float> y = y0;
      // A is the weight, B the input, C the output, as CudaCompute::Linear passes them.
      ColumnMajorSgemm(LinearGemm(rows, in, out), w.data(), x.data(), beta, y.data());
      const std::vector<float> want = RowMajorLinear(x, rows, in, w, out, beta, y0);
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_NEAR(y[i], want[i], 1e-5) << rows << "x" << in << "x" << out << " beta " << beta;
      }
    }
  }
}

TEST(CudaLayout, FusedQkvOffsetsPickEachProjectionOutOfOneProduct) {
  const QkvRow row{4, 2, 3};
  const int64_t in = 5, rows = 2, nq = 12, nkv = 6;
  EXPECT_EQ(row.width(), nq + 2 * nkv);
  const std::vector<float> x = Random(rows * in, 4), wq = Random(nq * in, 5),
                           wk = Random(nkv * in, 6), wv = Random(nkv * in, 7);
  std::vector<float> stacked = wq;  // rows of q, then k, then v, as CudaCompute::Init stacks them
  stacked.insert(stacked.end(), wk.begin(), wk.end());
  stacked.insert(stacked.end(), wv.begin(), wv.end());
  const std::vector<float> qkv =
      RowMajorLinear(x, rows, in, stacked, row.width(), 0, std::vector<float>(rows * row.width()));
  const std::vector<float> q =
      RowMajorLinear(x, rows, in, wq, nq, 0, std::vector<float>(rows * nq));
  const std::vector<float> k =
      RowMajorLinear(x, rows, in, wk, nkv, 0, std::vector<float>(rows * nkv));
  const std::vector<float> v =
      RowMajorLinear(x, rows, in, wv, nkv, 0, std::vector<float>(rows * nkv));
  for (int64_t r = 0; r < rows; ++r) {
    const float* fused = qkv.data() + r * row.width();
    for (int32_t d = 0; d < row.head_dim; ++d) {
      for (int32_t h = 0; h < row.heads; ++h) {
        EXPECT_EQ(fused[row.Q(h, d)], q[r * nq + h * row.head_dim + d]);
      }
      for (int32_t g = 0; g < row.kv_heads; ++g) {
        EXPECT_EQ(fused[row.K(g, d)], k[r * nkv + g * row.head_dim + d]);
        EXPECT_EQ(fused[row.V(g, d)], v[r * nkv + g * row.head_dim + d]);
      }
    }
  }
}

TEST(CudaLayout, AttentionLaunchFitsEveryPresetAndLongPrompts) {
  for (int32_t head_dim : {16, 32, 64, 128, 256}) {
    const AttentionLaunch a = AttentionLaunchFor(100000, 32, head_dim);
    EXPECT_LE(a.shared_bytes, kDefaultSharedBytes) << head_dim;
    EXPECT_EQ(a.grid_x, 100000);  // rows on x: y and z stop at 65535
    EXPECT_EQ(a.grid_y, 32);
  }
  EXPECT_EQ(AttentionLaunch::kThreads % 32, 0);
  EXPECT_EQ(BlocksFor(257, 256), 2);
  EXPECT_EQ(BlocksFor(256, 256), 1);
}

TEST(CudaLayout, RopeAngleIsRoundedToFloatAsTransformersComputesIt) {
  // 100003 x 0.1f in float32 is not the double product: the CPU model rounds it, so must we.
  const float angle = RopeAngle(100003, 0.1f);
  EXPECT_EQ(angle, static_cast<float>(100003) * 0.1f);
  EXPECT_NE(double(angle), 100003.0 * double(0.1f));
}

// The attention kernel's loop over the context in tiles of AttentionLaunch::kThreads, one value
// per position and dim, as the kernel runs it (the block reductions as plain loops).
std::vector<float> TiledAttention(const std::vector<float>& scores, const std::vector<float>& v,
                                  int32_t dims) {
  constexpr int32_t T = AttentionLaunch::kThreads;
  const auto context = static_cast<int64_t>(scores.size());
  std::vector<float> acc(dims, 0.0f), weight(T);
  OnlineSoftmax softmax;
  for (int64_t t0 = 0; t0 < context; t0 += T) {
    const int32_t n = static_cast<int32_t>(std::min<int64_t>(T, context - t0));
    float tile_max = -3.402823466e38f;
    for (int32_t j = 0; j < n; ++j) tile_max = std::max(tile_max, scores[t0 + j]);
    const float rescale = softmax.Begin(tile_max);
    float tile_sum = 0.0f;
    for (int32_t j = 0; j < n; ++j) tile_sum += weight[j] = expf(scores[t0 + j] - softmax.max);
    softmax.sum += tile_sum;
    for (int32_t d = 0; d < dims; ++d) {
      float a = acc[d] * rescale;
      for (int32_t j = 0; j < n; ++j) a += weight[j] * v[(t0 + j) * dims + d];
      acc[d] = a;
    }
  }
  for (float& a : acc) a /= softmax.sum;
  return acc;
}

TEST(CudaLayout, TiledOnlineSoftmaxIsTheSoftmaxOfTheWholeContext) {
  constexpr int32_t kDims = 5;
  for (int64_t context : {1, 2, 127, 128, 129, 300, 1000}) {
    for (float spread : {1.0f, 30.0f}) {  // 30: e^score alone would overflow float32
      std::vector<float> scores = Random(context, 8), v = Random(context * kDims, 9);
      for (float& s : scores) s *= spread;
      // Rising scores: each tile's maximum exceeds the last, so the rescaling is exercised.
      for (int64_t t = 0; t < context; ++t) scores[t] += spread * float(t) / float(context);
      const double top = *std::max_element(scores.begin(), scores.end());
      double total = 0;
      for (float s : scores) total += std::exp(double(s) - top);
      const std::vector<float> got = TiledAttention(scores, v, kDims);
      for (int32_t d = 0; d < kDims; ++d) {
        double want = 0;
        for (int64_t t = 0; t < context; ++t) {
          want += std::exp(double(scores[t]) - top) / total * v[t * kDims + d];
        }
        ASSERT_NEAR(got[d], want, 1e-5)
            << context << " positions, spread " << spread << ", dim " << d;
      }
    }
  }
}

TEST(CudaCompute, WithoutAGpuItIsAnErrorThatSaysWhy) {
  const gpu::GpuInfo info = gpu::Probe();
  if (info.devices > 0) GTEST_SKIP() << "this node has a GPU: " << gpu::Describe(info);
  auto model = model::LoadModel("tiny", 0);
  ASSERT_TRUE(model.ok());
  auto compute = CudaKvCompute(*model);
  ASSERT_FALSE(compute.ok());
  EXPECT_EQ(compute.status().code(), ErrorCode::kNotSupported);
  EXPECT_NE(
      compute.status().message().find("no CUDA GPU to run the model on: " + gpu::Describe(info)),
      std::string::npos)
      << compute.status().ToString();
}

}  // namespace
}  // namespace mooncake::engine::cuda
