// What this CPU runs: the conditions of our vector kernels (attention_avx2.cc,
// matmul_small_avx2.cc, matmul_small_avx512.cc) and of BLIS's zen3 choice (matmul.cc).
#pragma once

namespace mooncake::model {

#if defined(__x86_64__)
inline bool CpuHasAvx2Fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
// AVX-512F (the OS saving its registers included: libgcc checks XCR0) and FMA.
inline bool CpuHasAvx512Fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
}
#else
inline bool CpuHasAvx2Fma() { return false; }
inline bool CpuHasAvx512Fma() { return false; }
#endif

}  // namespace mooncake::model
