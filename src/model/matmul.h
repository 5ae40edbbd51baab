// The matmul of every linear layer. Row i of the result is the same bits whatever the number of
// rows and row i's place among them (docs/MODEL.md "Determinism"): BLIS's conventional path
// computes edge tiles with the same micro-kernel and never splits the sum over k between
// threads; its shape-chosen "sup" path is turned off, and a single row is padded to two. A few
// rows (decode steps) run matmul_small.h's kernel instead, which streams each weight once where
// BLIS packs the whole matrix, and only once this process has checked that it gives BLIS's
// bits exactly (else BLIS runs them too).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mooncake::model {

// A linear layer's weight, held once, in the few-rows kernel's panel layout (matmul_small.h):
// a decode step reads it front to back. BLIS, which runs more rows, gets an [in, out] copy made
// per call (a prefill chunk's matmul does about `rows` times the work of that copy).
class LinearWeight {
 public:
  LinearWeight() = default;
  // From nn.Linear's layout, w[out, in] row-major.
  static LinearWeight FromNnLinear(const float* w, int64_t out, int64_t in);
  // From the transposed layout, wt[in, out] row-major.
  static LinearWeight FromInOut(const float* wt, int64_t in, int64_t out);

  int64_t in() const { return in_; }
  int64_t out() const { return out_; }
  const float* panels() const { return panels_.data(); }
  // The weight as wt[in, out] row-major into `wt` (in x out floats).
  void ToInOut(float* wt) const;

 private:
  // in x out, every panel zero (the padding columns of the last one stay zero).
  LinearWeight(int64_t in, int64_t out);

  int64_t in_ = 0, out_ = 0;
  std::vector<float> panels_;
};

// y[rows, w.out()] = x[rows, w.in()] * W; row-major, float32.
void Linear(const float* x, int64_t rows, const LinearWeight& w, float* y);

// y[rows, out] = x[rows, in] * wt[in, out] through BLIS alone (callers holding that layout).
void Linear(const float* x, int64_t rows, int64_t in, const float* wt, int64_t out, float* y);

// An nn.Linear weight [out, in] as [in, out].
std::vector<float> TransposeWeight(const std::vector<float>& w, int64_t out, int64_t in);

// "BLAS" or "BLAS + few-rows kernel (avx512, kc 256)": whether Linear runs matmul_small.h's
// kernel for a few rows in this process, compiled for which instructions, and with which block
// of inputs it matched BLIS.
std::string LinearKernels();

// The block of inputs with which the few-rows kernel matched BLIS in this process (0: it did
// not, BLIS runs every shape).
int64_t SmallRowsBlock();

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
