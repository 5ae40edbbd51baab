// The matmul of every linear layer, through BLIS. Row i of the result is the same bits whatever
// the number of rows and row i's place among them (docs/MODEL.md "Determinism"): BLIS's
// conventional path computes edge tiles with the same micro-kernel and never splits the sum over
// k between threads; its shape-chosen "sup" path is turned off, and a single row is padded to
// two.
#pragma once

#include <cstdint>
#include <string>

namespace mooncake::model {

// y[rows, out] = x[rows, in] * w[out, in]^T (w in nn.Linear layout); all row-major, float32.
void Linear(const float* x, int64_t rows, int64_t in, const float* w, int64_t out, float* y);

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
