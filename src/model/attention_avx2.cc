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

}  // namespace

#include "model/attention_kernels.inl"

}  // namespace mooncake::model::attention_avx2

#else  // another CPU: attention.cc never selects these

namespace mooncake::model::attention_avx2 {
const AttentionKernelSet kKernels{nullptr, nullptr};
}  // namespace mooncake::model::attention_avx2

#endif
