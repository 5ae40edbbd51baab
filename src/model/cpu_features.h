// Whether this CPU runs AVX2 and FMA instructions: the condition of our AVX2 kernels
// (attention_avx2.cc, matmul_small.cc) and of BLIS's zen3 choice (matmul.cc).
#pragma once

namespace mooncake::model {

inline bool CpuHasAvx2Fma() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace mooncake::model
