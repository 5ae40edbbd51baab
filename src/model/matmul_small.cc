#include "model/matmul_small.h"

#include "model/cpu_features.h"

namespace mooncake::model {

SmallRowsIsa BestSmallRowsIsa() {
#if defined(__x86_64__)
  if (CpuHasAvx512Fma()) return SmallRowsIsa::kAvx512;
  if (CpuHasAvx2Fma()) return SmallRowsIsa::kAvx2;
#endif
  return SmallRowsIsa::kNone;
}

const char* SmallRowsIsaName(SmallRowsIsa isa) {
  switch (isa) {
    case SmallRowsIsa::kAvx512:
      return "avx512";
    case SmallRowsIsa::kAvx2:
      return "avx2";
    default:
      return "none";
  }
}

void SmallRowsLinear(const float* x, int64_t rows, int64_t in, const float* panels, int64_t out,
                     float* y, int64_t kc, SmallRowsIsa isa) {
  if (isa == SmallRowsIsa::kAvx512) return SmallRowsLinearAvx512(x, rows, in, panels, out, y, kc);
  if (isa == SmallRowsIsa::kAvx2) return SmallRowsLinearAvx2(x, rows, in, panels, out, y, kc);
}

}  // namespace mooncake::model
