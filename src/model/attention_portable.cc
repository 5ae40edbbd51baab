// attention_kernels.inl for any CPU: each lane's fused multiply-add through std::fma, which
// rounds as the FMA instruction does, so the bits equal attention_avx2.cc's.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/attention_kernels.h"

namespace mooncake::model::attention_portable {
namespace {

// Eight floats in memory (a vector type would change the ABI of these helpers without AVX).
struct V8 {
  float lane[8];
  float& operator[](int i) { return lane[i]; }
  float operator[](int i) const { return lane[i]; }
};
V8 Fma(V8 a, V8 b, V8 c) {
  V8 r;
  for (int i = 0; i < 8; ++i) r[i] = std::fma(a[i], b[i], c[i]);
  return r;
}
V8 Broadcast(float x) { return V8{{x, x, x, x, x, x, x, x}}; }
V8 Load(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void Store(float* p, V8 v) { std::memcpy(p, &v, sizeof v); }

}  // namespace

#include "model/attention_kernels.inl"

}  // namespace mooncake::model::attention_portable
