// The matmul of every linear layer. Row i of the result is the same bits whatever the number of
// rows and row i's place among them (docs/MODEL.md "Determinism"): BLIS's conventional path
// computes edge tiles with the same micro-kernel and never splits the sum over k between
// threads; its shape-chosen "sup" path is turned off, and a single row is padded to two. A few
// rows (decode steps) run matmul_small.h's kernel instead, which reads each weight once where
// BLIS packs the whole matrix, and only once this process has checked that it gives BLIS's
// bits exactly (else BLIS runs them too).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mooncake::model {

// y[rows, out] = x[rows, in] * wt[in, out]; all row-major, float32. The weight is transposed
// from nn.Linear's [out, in] layout (TransposeWeight): the few-rows kernel reads a row of 16
// outputs' weights at once.
void Linear(const float* x, int64_t rows, int64_t in, const float* wt, int64_t out, float* y);

// An nn.Linear weight [out, in] in Linear's layout [in, out].
std::vector<float> TransposeWeight(const std::vector<float>& w, int64_t out, int64_t in);

// "BLAS" or "BLAS + few-rows kernel (kc 256)": whether Linear runs matmul_small.h's kernel for
// a few rows in this process, and with which block of inputs it matched BLIS.
std::string LinearKernels();

// "BLIS 0.9.0 (zen3)": the library and the kernel configuration it runs on this CPU.
std::string MatmulBackend();

// BLIS 0.9.0 (Debian 12) does not recognise AMD CPUs after Zen 3 (family 0x19) and falls back
// to its generic C kernels, which ran the `small` preset's prefill at 0.6x the speed of its zen3
// kernels here, and sum in another order than `mooncake generate` did when it chose zen3. BLIS
// reads its choice from BLIS_ARCH_TYPE once, at its first call, so this sets BLIS_ARCH_TYPE to
// the zen3 configuration (AVX2 + FMA) on an AMD CPU of family 0x1a or later with AVX2 and FMA,
// unless BLIS_ARCH_TYPE is already set; elsewhere it does nothing. Transformer::Create calls it,
// so every process that builds a model (generate, calibrate, each rank of the serving job) runs
// the same kernels.
void ChooseMatmulKernels();

// The number BLIS_ARCH_TYPE takes for a BLIS kernel configuration ("zen3", "haswell"...) in
// the BLIS linked, or -1 when it has none by that name. Reads no environment.
int MatmulKernelId(const std::string& name);

}  // namespace mooncake::model
