// matmul_small_kernel.inl on AVX-512F + FMA: 16 lanes, a panel of 32 outputs at once,
// up to 12 rows at once (24 of the 32 registers). This file alone is compiled with -mavx512f
// -mfma; matmul_small.cc calls it only where the CPU has both.
#include <algorithm>
#include <vector>

#include "model/matmul_small.h"

#if defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>

namespace mooncake::model {
namespace avx512 {
namespace {

using V = __m512;
constexpr int64_t kLanes = 16;
constexpr int kMaxRows = 12;
V Zero() { return _mm512_setzero_ps(); }
V Load(const float* p) { return _mm512_loadu_ps(p); }
void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
V Add(V a, V b) { return _mm512_add_ps(a, b); }
V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
V Broadcast(const float* p) { return _mm512_set1_ps(*p); }
void Prefetch(const float* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }

}  // namespace

#include "model/matmul_small_kernel.inl"

}  // namespace avx512

void SmallRowsLinearAvx512(const float* x, int64_t rows, int64_t in, const float* panels,
                           int64_t out, float* y, int64_t kc) {
  avx512::KernelSmallRowsLinear(x, rows, in, panels, out, y, kc);
}

}  // namespace mooncake::model

#else

namespace mooncake::model {
void SmallRowsLinearAvx512(const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t) {
}
}  // namespace mooncake::model

#endif
