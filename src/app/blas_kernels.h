// The BLAS kernels the reference model runs on (src/model uses BLIS). BLIS 0.9.0 (Debian 12)
// does not recognise AMD CPUs after Zen 3 (family 0x19) and falls back to its generic C
// kernels, which ran the `small` preset's prefill at 0.6x the speed of its zen3 kernels here;
// BLIS reads its choice from BLIS_ARCH_TYPE once, at its first call. Process-wide, so it is
// chosen here, in src/app, before any model computes.
#pragma once

namespace mooncake::app {

// Sets BLIS_ARCH_TYPE to BLIS's zen3 configuration (AVX2 + FMA) on an AMD CPU of family 0x1a or
// later with AVX2 and FMA, unless BLIS_ARCH_TYPE is already set. Does nothing elsewhere.
void ChooseBlasKernels();

}  // namespace mooncake::app
