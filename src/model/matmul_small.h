// Linear for a few rows without BLIS's packing (matmul.cc uses it only after checking, in this
// process, that it gives BLIS's bits): each output is one fused multiply-add chain per block of
// `kc` inputs, in input order, and the blocks' results are added in order, which is what BLIS's
// conventional path computes with its AVX2 kernels. The lane width does not enter a chain, so
// an AVX-512 compilation gives the same bits as the AVX2 one. Decode steps run a few rows,
// where BLIS packs every weight matrix for them; this reads each weight once, front to back.
#pragma once

#include <cstdint>

namespace mooncake::model {

// The weights' layout (LinearWeight in matmul.h): panels of kPanelWidth outputs, each panel
// [in][kPanelWidth] contiguous and zero past the last output, panel after panel. The kernel
// reads a panel's block of kc inputs (32 KB at kc 256) as one stream.
constexpr int64_t kPanelWidth = 32;

// The instruction sets with a compilation of the kernel.
enum class SmallRowsIsa { kNone, kAvx2, kAvx512 };

// The widest this CPU runs (kNone: neither AVX2 + FMA nor AVX-512F + FMA).
SmallRowsIsa BestSmallRowsIsa();
const char* SmallRowsIsaName(SmallRowsIsa isa);

// y[rows, out] = x[rows, in] * W, W in the panel layout above; `isa` one this CPU runs.
void SmallRowsLinear(const float* x, int64_t rows, int64_t in, const float* panels, int64_t out,
                     float* y, int64_t kc, SmallRowsIsa isa);

// The compilations (matmul_small_avx2.cc, matmul_small_avx512.cc); empty where the compiler
// cannot build them, never called then.
void SmallRowsLinearAvx2(const float* x, int64_t rows, int64_t in, const float* panels, int64_t out,
                         float* y, int64_t kc);
void SmallRowsLinearAvx512(const float* x, int64_t rows, int64_t in, const float* panels,
                           int64_t out, float* y, int64_t kc);

}  // namespace mooncake::model
