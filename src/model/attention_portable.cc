// attention_kernels.inl for any CPU: each lane's fused multiply-add through std::fma, which
// rounds as the FMA instruction does, so the bits equal attention_avx2.cc's.
#include <algorithm>
#include <cmath>
#include <cstdint>
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
template <typename Op>
V8 Lanes(V8 a, V8 b, Op op) {
  V8 r;
  for (int i = 0; i < 8; ++i) r[i] = op(a[i], b[i]);
  return r;
}
V8 Mul(V8 a, V8 b) {
  return Lanes(a, b, [](float x, float y) { return x * y; });
}
V8 Sub(V8 a, V8 b) {
  return Lanes(a, b, [](float x, float y) { return x - y; });
}
V8 Add(V8 a, V8 b) {
  return Lanes(a, b, [](float x, float y) { return x + y; });
}
V8 Div(V8 a, V8 b) {
  return Lanes(a, b, [](float x, float y) { return x / y; });
}
V8 Max(V8 a, V8 b) {
  return Lanes(a, b, [](float x, float y) { return x > y ? x : y; });
}

uint32_t Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
float FromBits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// e^x for one lane: x = n ln 2 + r with n rounded to nearest (the 1.5 x 2^23 trick), e^r by its
// Taylor polynomial in fused steps, 2^n added to the exponent bits.
float ExpLane(float x) {
  const float v = x > kExpFloor ? x : kExpFloor;
  const float t = v * kLog2e + kRoundMagic;
  const float n = t - kRoundMagic;
  const uint32_t ni = Bits(t) - Bits(kRoundMagic);
  float r = std::fma(n, -kLn2Hi, v);
  r = std::fma(n, -kLn2Lo, r);
  float p = kExpPoly[0];
  for (int i = 1; i < kExpPolyTerms; ++i) p = std::fma(p, r, kExpPoly[i]);
  return FromBits(Bits(p) + (ni << 23));
}
V8 Exp(V8 x) {
  V8 r;
  for (int i = 0; i < 8; ++i) r[i] = ExpLane(x[i]);
  return r;
}

}  // namespace

#include "model/attention_kernels.inl"

}  // namespace mooncake::model::attention_portable
