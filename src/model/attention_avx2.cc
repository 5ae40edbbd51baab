// attention_kernels.inl on AVX2 + FMA (this file alone is compiled with -mavx2 -mfma; it is
// called only where the CPU has both, attention.cc checks).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/attention_kernels.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace mooncake::model::attention_avx2 {
namespace {

using V8 = float __attribute__((vector_size(32)));
V8 Fma(V8 a, V8 b, V8 c) {
  return reinterpret_cast<V8>(_mm256_fmadd_ps(
      reinterpret_cast<__m256>(a), reinterpret_cast<__m256>(b), reinterpret_cast<__m256>(c)));
}
V8 Broadcast(float x) { return V8{x, x, x, x, x, x, x, x}; }
V8 Load(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void Store(float* p, V8 v) { std::memcpy(p, &v, sizeof v); }
__m256 M(V8 v) { return reinterpret_cast<__m256>(v); }
V8 Of(__m256 v) { return reinterpret_cast<V8>(v); }
V8 Mul(V8 a, V8 b) { return Of(_mm256_mul_ps(M(a), M(b))); }
V8 Sub(V8 a, V8 b) { return Of(_mm256_sub_ps(M(a), M(b))); }
V8 Add(V8 a, V8 b) { return Of(_mm256_add_ps(M(a), M(b))); }
V8 Div(V8 a, V8 b) { return Of(_mm256_div_ps(M(a), M(b))); }
V8 Max(V8 a, V8 b) { return Of(_mm256_max_ps(M(a), M(b))); }  // a > b ? a : b

// e^x, the steps of attention_portable.cc's Exp lane by lane (attention_kernels.h).
V8 Exp(V8 x) {
  const __m256 v = _mm256_max_ps(M(x), _mm256_set1_ps(kExpFloor));
  const __m256 magic = _mm256_set1_ps(kRoundMagic);
  const __m256 t = _mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(kLog2e)), magic);
  const __m256 n = _mm256_sub_ps(t, magic);
  const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic));
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Hi), v);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kExpPoly[0]);
  for (int i = 1; i < kExpPolyTerms; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[i]));
  return Of(
      _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(ni, 23))));
}

}  // namespace

#include "model/attention_kernels.inl"

}  // namespace mooncake::model::attention_avx2

#else  // another CPU: attention.cc never selects these

namespace mooncake::model::attention_avx2 {
const AttentionKernelSet kKernels{nullptr, nullptr, nullptr, nullptr, nullptr};
}  // namespace mooncake::model::attention_avx2

#endif
