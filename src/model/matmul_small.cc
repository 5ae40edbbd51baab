#include "model/matmul_small.h"

#include "common/enum_names.h"
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
  static constexpr EnumName<SmallRowsIsa> kNames[] = {{SmallRowsIsa::kAvx512, "avx512"},
                                                      {SmallRowsIsa::kAvx2, "avx2"},
                                                      {SmallRowsIsa::kNone, "none"}};
  return NameIn(kNames, isa, "none");
}

void SmallRowsLinear(const float* x, int64_t rows, int64_t in, const float* panels, int64_t out,
                     float* y, int64_t kc, SmallRowsIsa isa) {
  if (isa == SmallRowsIsa::kAvx512) return SmallRowsLinearAvx512(x, rows, in, panels, out, y, kc);
  if (isa == SmallRowsIsa::kAvx2) return SmallRowsLinearAvx2(x, rows, in, panels, out, y, kc);
}

}  // namespace mooncake::model
