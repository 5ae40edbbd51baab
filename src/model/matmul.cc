#include "model/matmul.h"

#include <blis.h>

#include <cstdlib>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace mooncake::model {

void Linear(const float* x, int64_t rows, int64_t in, const float* w, int64_t out, float* y) {
  if (rows <= 0) return;
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
  // A = x: m x in, row stride in. B = w^T: in x out, element (k, j) at w[j * in + k].
  bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, out, in, &alpha, const_cast<float*>(a), in,
               1, const_cast<float*>(w), 1, in, &beta, c, out, 1, nullptr, &rntm);
  if (rows == 1) std::copy(padded_y.begin(), padded_y.begin() + out, y);
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
  if (std::getenv("BLIS_ARCH_TYPE") != nullptr) return;
  __builtin_cpu_init();
  if (!__builtin_cpu_is("amd") || !__builtin_cpu_supports("avx2") ||
      !__builtin_cpu_supports("fma")) {
    return;
  }
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
