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
// edge (rows 1 to 16, one pass and several, inputs around the block sizes, outputs not a
// multiple of the panel), or 0 when no candidate does (another kernel configuration, another
// BLIS): then BLIS runs every shape.
int64_t CheckSmallRowsKernel(SmallRowsIsa isa) {
  if (isa == SmallRowsIsa::kNone) return 0;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<int32_t>(state >> 33) % 2001 - 1000) / 997.0f;
  };
  for (int64_t kc : {256, 384, 512, 192, 128, 320}) {
    bool same = true;
    for (int64_t rows : {1, 2, 5, 7, 13, 16}) {
      for (int64_t in : {1, 255, 256, 257, 383, 385, 513, 1100}) {
        const int64_t out = 37;
        std::vector<float> x(rows * in), wt(in * out), want(rows * out), got(rows * out);
        for (float& v : x) v = next();
        for (float& v : wt) v = next();
        BlisLinear(x.data(), rows, in, wt.data(), out, want.data());
        const LinearWeight w = LinearWeight::FromInOut(wt.data(), in, out);
        SmallRowsLinear(x.data(), rows, in, w.panels(), out, got.data(), kc, isa);
        same = same && std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0;
      }
    }
    if (same) return kc;
  }
  return 0;
}

struct SmallRowsChoice {
  SmallRowsIsa isa;
  int64_t kc;
};

const SmallRowsChoice& SmallRows() {
  static const SmallRowsChoice choice = [] {
    const SmallRowsIsa isa = BestSmallRowsIsa();
    return SmallRowsChoice{isa, CheckSmallRowsKernel(isa)};
  }();
  return choice;
}

}  // namespace

LinearWeight::LinearWeight(int64_t in, int64_t out) : in_(in), out_(out) {
  const int64_t panels = (out + kPanelWidth - 1) / kPanelWidth;
  panels_.assign(size_t(panels * kPanelWidth * in), 0.0f);
}

LinearWeight LinearWeight::FromNnLinear(const float* w, int64_t out, int64_t in) {
  LinearWeight lw(in, out);
  for (int64_t o = 0; o < out; ++o) {
    float* to = lw.panels_.data() + o / kPanelWidth * kPanelWidth * in + o % kPanelWidth;
    const float* from = w + o * in;
    for (int64_t i = 0; i < in; ++i) to[i * kPanelWidth] = from[i];
  }
  return lw;
}

LinearWeight LinearWeight::FromInOut(const float* wt, int64_t in, int64_t out) {
  LinearWeight lw(in, out);
  for (int64_t col = 0; col < out; col += kPanelWidth) {
    const int64_t width = std::min(kPanelWidth, out - col);
    float* panel = lw.panels_.data() + col * in;
    for (int64_t i = 0; i < in; ++i)
      std::copy_n(wt + i * out + col, width, panel + i * kPanelWidth);
  }
  return lw;
}

void LinearWeight::ToInOut(float* wt) const {
  for (int64_t col = 0; col < out_; col += kPanelWidth) {
    const int64_t width = std::min(kPanelWidth, out_ - col);
    const float* panel = panels_.data() + col * in_;
    for (int64_t i = 0; i < in_; ++i)
      std::copy_n(panel + i * kPanelWidth, width, wt + i * out_ + col);
  }
}

void Linear(const float* x, int64_t rows, const LinearWeight& w, float* y) {
  if (rows <= 0) return;
  if (rows <= kSmallRows) {
    if (const SmallRowsChoice& small = SmallRows(); small.kc > 0) {
      return SmallRowsLinear(x, rows, w.in(), w.panels(), w.out(), y, small.kc, small.isa);
    }
  }
  thread_local std::vector<float> wt;
  wt.resize(size_t(w.in() * w.out()));
  w.ToInOut(wt.data());
  BlisLinear(x, rows, w.in(), wt.data(), w.out(), y);
}

void Linear(const float* x, int64_t rows, int64_t in, const float* wt, int64_t out, float* y) {
  if (rows > 0) BlisLinear(x, rows, in, wt, out, y);
}

std::vector<float> TransposeWeight(const std::vector<float>& w, int64_t out, int64_t in) {
  std::vector<float> t(w.size());
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t i = 0; i < in; ++i) t[i * out + o] = w[o * in + i];
  }
  return t;
}

int64_t SmallRowsBlock() { return SmallRows().kc; }

std::string LinearKernels() {
  const SmallRowsChoice& small = SmallRows();
  if (small.kc == 0) return "BLAS";
  return std::string("BLAS + few-rows kernel (") + SmallRowsIsaName(small.isa) + ", kc " +
         std::to_string(small.kc) + ")";
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
