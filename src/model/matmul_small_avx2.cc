// matmul_small_kernel.inl on AVX2 + FMA: 8 lanes, a panel of 32 outputs in two halves of 16,
// up to 6 rows at once (12 accumulators). This file alone is compiled with -mavx2 -mfma;
// matmul_small.cc calls it only where the CPU has both.
#include <algorithm>
#include <vector>

#include "model/matmul_small.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace mooncake::model {
namespace avx2 {
namespace {

using V = __m256;
constexpr int64_t kLanes = 8;
constexpr int kMaxRows = 6;
V Zero() { return _mm256_setzero_ps(); }
V Load(const float* p) { return _mm256_loadu_ps(p); }
void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
V Add(V a, V b) { return _mm256_add_ps(a, b); }
V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
V Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
void Prefetch(const float* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }

}  // namespace

#include "model/matmul_small_kernel.inl"

}  // namespace avx2

void SmallRowsLinearAvx2(const float* x, int64_t rows, int64_t in, const float* panels, int64_t out,
                         float* y, int64_t kc) {
  avx2::KernelSmallRowsLinear(x, rows, in, panels, out, y, kc);
}

}  // namespace mooncake::model

#else

namespace mooncake::model {
void SmallRowsLinearAvx2(const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t) {}
}  // namespace mooncake::model

#endif
