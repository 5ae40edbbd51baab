#include "app/blas_kernels.h"

#include <cstdlib>
#include <string>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "model/matmul.h"

namespace mooncake::app {

void ChooseBlasKernels() {
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
  const int zen3 = model::MatmulKernelId("zen3");
  if (family >= 0x1a && zen3 >= 0) {
    setenv("BLIS_ARCH_TYPE", std::to_string(zen3).c_str(), /*overwrite=*/0);
  }
#endif
}

}  // namespace mooncake::app
