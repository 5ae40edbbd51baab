// The BLAS kernels the reference model runs on (src/model uses BLIS). BLIS 0.9.0 (Debian 12)
// does not recognise AMD CPUs newer than Zen 3 (family 0x19) and falls back to its generic C
// kernels, 3 to 5 times slower; BLIS reads its choice from BLIS_ARCH_TYPE once, at its first
// call. Process-wide, so it is chosen here, in src/app, before any model is built.
#pragma once

namespace mooncake::app {

// Sets BLIS_ARCH_TYPE=zen2 (AVX2 + FMA kernels) on an AMD CPU of family 0x1a or later with
// AVX2 and FMA, unless BLIS_ARCH_TYPE is already set. Does nothing elsewhere.
void ChooseBlasKernels();

}  // namespace mooncake::app
