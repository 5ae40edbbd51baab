#include "model/matmul.h"

#include <blis.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "model/cpu_features.h"
#include "model/matmul_small.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace mooncake::model {

namespace {

// Rows up to this many run the few-rows kernel (when it matched BLIS): a decode batch.
constexpr int64_t kSmallRows = 16;

void BlisLinear(const float* x, int64_t rows, int64_t in, const float* wt, int64_t out, float* y) {
  std::vector<float> padded_x, padded_y;
  const float* a = x;
  float* c = y;
  dim_t m = rows;
  if (rows == 1) {  // BLIS takes gemv for m = 1, which sums in another order
    padded_x.assign(2 * in, 0.0f);
    std::copy(x, x + in, padded_x.begin());
    padded_y.resize(2 * out);
    a = padded_x.data();
    c = padded_y.data();
    m = 2;
  }
  float alpha = 1.0f, beta = 0.0f;
  // BLIS's small/unpacked ("sup") path, taken by shape, sums in another order than its
  // conventional path (the haswell kernels do); without it every shape runs the same
  // micro-kernel, edge tiles included.
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_disable_l3_sup(&rntm);
  // A = x: m x in, row stride in. B = wt: in x out, row stride out.
  bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, out, in, &alpha, const_cast<float*>(a), in,
               1, const_cast<float*>(wt), out, 1, &beta, c, out, 1, nullptr, &rntm);
  if (rows == 1) std::copy(padded_y.begin(), padded_y.begin() + out, y);
}

// The block of inputs with which SmallRowsLinear gives BLIS's bits on probes of every kind of
// edge (rows 1 to 7, inputs around the block sizes, outputs not a multiple of 16), or 0 when no
// candidate does (another kernel configuration, another BLIS): then BLIS runs every shape.
int64_t CheckSmallRowsKernel() {
  if (!SmallRowsLinearAvailable()) return 0;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<int32_t>(state >> 33) % 2001 - 1000) / 997.0f;
  };
  for (int64_t kc : {256, 384, 512, 192, 128, 320}) {
    bool same = true;
    for (int64_t rows : {1, 2, 5, 7}) {
      for (int64_t in : {1, 255, 256, 257, 383, 385, 513, 1100}) {
        const int64_t out = 37;
        std::vector<float> x(rows * in), wt(in * out), want(rows * out), got(rows * out);
        for (float& v : x) v = next();
        for (float& v : wt) v = next();
        BlisLinear(x.data(), rows, in, wt.data(), out, want.data());
        SmallRowsLinear(x.data(), rows, in, wt.data(), out, got.data(), kc);
        same = same && std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0;
      }
    }
    if (same) return kc;
  }
  return 0;
}

int64_t SmallRowsKc() {
  static const int64_t kc = CheckSmallRowsKernel();
  return kc;
}

}  // namespace

void Linear(const float* x, int64_t rows, int64_t in, const float* wt, int64_t out, float* y) {
  if (rows <= 0) return;
  if (rows <= kSmallRows) {
    if (const int64_t kc = SmallRowsKc(); kc > 0) {
      return SmallRowsLinear(x, rows, in, wt, out, y, kc);
    }
  }
  BlisLinear(x, rows, in, wt, out, y);
}

std::vector<float> TransposeWeight(const std::vector<float>& w, int64_t out, int64_t in) {
  std::vector<float> t(w.size());
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t i = 0; i < in; ++i) t[i * out + o] = w[o * in + i];
  }
  return t;
}

std::string LinearKernels() {
  const int64_t kc = SmallRowsKc();
  return kc > 0 ? "BLAS + few-rows kernel (kc " + std::to_string(kc) + ")" : "BLAS";
}

std::string MatmulBackend() {
  // Before any matmul BLIS's kernel table is not built, and with BLIS_ARCH_TYPE set
  // bli_arch_query_id() would abort ("Accessed uninitialized context in gks"); bli_init() builds
  // it once and is a no-op after.
  bli_init();
  return std::string("BLIS ") + bli_info_get_version_str() + " (" +
         bli_arch_string(bli_arch_query_id()) + ")";
}

}  // namespace mooncake::model

namespace mooncake::model {

int MatmulKernelId(const std::string& name) {
  for (int id = 0; id < BLIS_NUM_ARCHS; ++id) {
    if (name == bli_arch_string(static_cast<arch_t>(id))) return id;
  }
  return -1;
}

}  // namespace mooncake::model

namespace mooncake::model {

void ChooseMatmulKernels() {
#if defined(__x86_64__)
  // A BLIS_ARCH_TYPE the user set stands: setenv below does not overwrite it.
  if (!CpuHasAvx2Fma() || !__builtin_cpu_is("amd")) return;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return;
  unsigned family = (eax >> 8) & 0xf;
  if (family == 0xf) family += (eax >> 20) & 0xff;
  const int zen3 = MatmulKernelId("zen3");
  if (family >= 0x1a && zen3 >= 0) {
    setenv("BLIS_ARCH_TYPE", std::to_string(zen3).c_str(), /*overwrite=*/0);
  }
#endif
}

}  // namespace mooncake::model
