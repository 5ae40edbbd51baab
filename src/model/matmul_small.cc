#include "model/matmul_small.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "model/cpu_features.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace mooncake::model {

#if defined(__AVX2__) && defined(__FMA__)

namespace {

constexpr int kMaxRows = 6;  // rows of x per pass: 6 x 16 outputs in 12 registers
constexpr int64_t kCols = 16;
// Inputs per sweep across the columns: a chain pauses in `partial` (exactly: a float stored
// and loaded back) after this many, so that a sweep reads 16 rows of the weights front to
// back, streams a prefetcher follows, rather than 256 rows strided by the width of the matrix.
constexpr int64_t kSweep = 16;

// Where a tile's chains stand: inputs [k0, k1) of one block of kc, which starts (`start`) or
// ends (`end`) here; at the end the block's result is stored into y (the first block) or added.
struct Span {
  int64_t k0, k1;
  bool start, end, first_block;
};

// Rows [0, MR) of x times columns [j, j + 16) of wt over the span's inputs.
template <int MR>
void Tile16(const float* x, int64_t in, const float* wt, int64_t out, int64_t j, Span s,
            float* partial, float* y) {
  __m256 acc[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    acc[i][0] = s.start ? _mm256_setzero_ps() : _mm256_loadu_ps(partial + i * out + j);
    acc[i][1] = s.start ? _mm256_setzero_ps() : _mm256_loadu_ps(partial + i * out + j + 8);
  }
  for (int64_t k = s.k0; k < s.k1; ++k) {
    const float* w = wt + k * out + j;
    // This row's weights four tiles on, which a later call reads: measured 21-23 ms -> 15-17 ms
    // per 8-sequence decode step of `small` (2 and 8 tiles on gave less, 16 nothing).
    _mm_prefetch(reinterpret_cast<const char*>(w + 4 * kCols), _MM_HINT_T0);
    const __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256 a = _mm256_broadcast_ss(x + i * in + k);
      acc[i][0] = _mm256_fmadd_ps(a, w0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(a, w1, acc[i][1]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float* to = (s.end ? y : partial) + i * out + j;
    if (s.end && !s.first_block) {
      acc[i][0] = _mm256_add_ps(_mm256_loadu_ps(to), acc[i][0]);
      acc[i][1] = _mm256_add_ps(_mm256_loadu_ps(to + 8), acc[i][1]);
    }
    _mm256_storeu_ps(to, acc[i][0]);
    _mm256_storeu_ps(to + 8, acc[i][1]);
  }
}

// The same chains for the last columns [j, out), one output at a time.
void TileTail(const float* x, int64_t rows, int64_t in, const float* wt, int64_t out, int64_t j,
              int64_t k0, int64_t k1, bool first, float* y) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t c = j; c < out; ++c) {
      float acc = 0.0f;
      for (int64_t k = k0; k < k1; ++k) acc = std::fma(x[i * in + k], wt[k * out + c], acc);
      y[i * out + c] = first ? acc : y[i * out + c] + acc;
    }
  }
}

void Rows(const float* x, int mr, int64_t in, const float* wt, int64_t out, int64_t j, Span s,
          float* partial, float* y) {
  switch (mr) {
    case 1:
      return Tile16<1>(x, in, wt, out, j, s, partial, y);
    case 2:
      return Tile16<2>(x, in, wt, out, j, s, partial, y);
    case 3:
      return Tile16<3>(x, in, wt, out, j, s, partial, y);
    case 4:
      return Tile16<4>(x, in, wt, out, j, s, partial, y);
    case 5:
      return Tile16<5>(x, in, wt, out, j, s, partial, y);
    default:
      return Tile16<6>(x, in, wt, out, j, s, partial, y);
  }
}

}  // namespace

bool SmallRowsLinearAvailable() { return CpuHasAvx2Fma(); }

void SmallRowsLinear(const float* x, int64_t rows, int64_t in, const float* wt, int64_t out,
                     float* y, int64_t kc) {
  const int64_t full = out / kCols * kCols;
  // Rows split evenly between passes (8 rows: 4 + 4, not 6 + 2, whose second pass would load
  // two vectors of weights for four multiply-adds).
  const int64_t passes = (rows + kMaxRows - 1) / kMaxRows;
  const int64_t per_pass = (rows + passes - 1) / passes;
  thread_local std::vector<float> partial;
  partial.resize(size_t(rows) * size_t(out));
  for (int64_t k0 = 0; k0 < in; k0 += kc) {
    const int64_t k1 = std::min(in, k0 + kc);
    for (int64_t s0 = k0; s0 < k1; s0 += kSweep) {
      const Span span{s0, std::min(k1, s0 + kSweep), s0 == k0, s0 + kSweep >= k1, k0 == 0};
      for (int64_t j = 0; j < full; j += kCols) {
        for (int64_t i = 0; i < rows; i += per_pass) {
          const int mr = static_cast<int>(std::min<int64_t>(per_pass, rows - i));
          Rows(x + i * in, mr, in, wt, out, j, span, partial.data() + i * out, y + i * out);
        }
      }
    }
    if (full < out) TileTail(x, rows, in, wt, out, full, k0, k1, k0 == 0, y);
  }
}

#else  // without AVX2 and FMA at compile time: never available

bool SmallRowsLinearAvailable() { return false; }
void SmallRowsLinear(const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t) {}

#endif

}  // namespace mooncake::model
