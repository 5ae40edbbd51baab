// Linear for a few rows without BLIS's packing (matmul.cc uses it only after checking, in this
// process, that it gives BLIS's bits): each output is one fused multiply-add chain per block of
// `kc` inputs, in input order, and the blocks' results are added in order, which is what BLIS's
// conventional path computes with its AVX2 kernels. Decode steps run a few rows, where BLIS
// packs every weight matrix for them; this reads each weight once.
#pragma once

#include <cstdint>

namespace mooncake::model {

// Whether this CPU runs SmallRowsLinear (AVX2 and FMA).
bool SmallRowsLinearAvailable();

// y[rows, out] = x[rows, in] * wt[in, out], all row-major.
void SmallRowsLinear(const float* x, int64_t rows, int64_t in, const float* wt, int64_t out,
                     float* y, int64_t kc);

}  // namespace mooncake::model
