// The few-rows kernel (matmul_small.h), written once over a vector type and compiled twice:
// matmul_small_avx2.cc (8 lanes, up to 6 rows at once) and matmul_small_avx512.cc (16 lanes,
// up to 12 rows). The including file defines, inside its own namespace: V, kLanes, kMaxRows,
// Zero(), Load(p), Store(p, v), Add(a, b), Fma(a, b, c) (a * b + c rounded once per lane),
// Broadcast(p) and Prefetch(p). Every output's arithmetic is the same in both: one chain per
// block of kc inputs from zero, the block's result stored (first block) or added to y.

namespace {

// The weights this many floats on (64 inputs of a panel, 8 KiB) are asked for while a tile runs,
// both lines of a panel's row: the hardware's prefetchers do not run that far ahead. 8 rows of
// `small`'s weights (AVX-512) took 5.2 ms with the first line 8 inputs on, 4.0 to 4.2 with it 64
// on (32: 4.4, 128: 4.2, 256: 4.9), 2.7 to 3.5 with both lines 64 on (32: 3.0 to 4.0, 128: 2.5
// to 2.7), where 41 GB/s would read them in 2.7.
constexpr int64_t kPrefetchAhead = 64 * kPanelWidth;

// Two vectors of outputs of one panel (from `w`, row stride kPanelWidth), rows [0, MR) of x,
// over the inputs [k0, k1): the block's chains in registers, then stored or added into y.
template <int MR>
void Tile(const float* x, int64_t ldx, const float* w, int64_t k0, int64_t k1, bool first,
          float* y, int64_t ldy) {
  V acc[MR][2];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = Zero();
  const float* wk = w + k0 * kPanelWidth;
  for (int64_t k = k0; k < k1; ++k, wk += kPanelWidth) {
    Prefetch(wk + kPrefetchAhead);
    Prefetch(wk + kPrefetchAhead + kPanelWidth / 2);
    const V w0 = Load(wk), w1 = Load(wk + kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const V a = Broadcast(x + i * ldx + k);
      acc[i][0] = Fma(a, w0, acc[i][0]);
      acc[i][1] = Fma(a, w1, acc[i][1]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    float* to = y + i * ldy;
    if (!first) {
      acc[i][0] = Add(Load(to), acc[i][0]);
      acc[i][1] = Add(Load(to + kLanes), acc[i][1]);
    }
    Store(to, acc[i][0]);
    Store(to + kLanes, acc[i][1]);
  }
}

template <int MR>
void TileOf(int mr, const float* x, int64_t ldx, const float* w, int64_t k0, int64_t k1,
            bool first, float* y, int64_t ldy) {
  if constexpr (MR > 1) {
    if (mr < MR) return TileOf<MR - 1>(mr, x, ldx, w, k0, k1, first, y, ldy);
  }
  Tile<MR>(x, ldx, w, k0, k1, first, y, ldy);
}

}  // namespace

void KernelSmallRowsLinear(const float* x, int64_t rows, int64_t in, const float* panels,
                           int64_t out, float* y, int64_t kc) {
  // Rows split evenly between passes (8 rows on AVX2: 4 + 4, not 6 + 2, whose second pass
  // would load two vectors of weights for four multiply-adds).
  const int64_t passes = (rows + kMaxRows - 1) / kMaxRows;
  const int64_t per_pass = (rows + passes - 1) / passes;
  // The last panel's padding columns are computed too, into this, then dropped.
  thread_local std::vector<float> edge;
  for (int64_t col = 0; col < out; col += kPanelWidth) {
    const float* panel = panels + col * in;
    const bool whole = col + kPanelWidth <= out;
    if (!whole) edge.resize(size_t(rows) * kPanelWidth);
    float* to = whole ? y + col : edge.data();
    const int64_t ldy = whole ? out : kPanelWidth;
    for (int64_t k0 = 0; k0 < in; k0 += kc) {
      const int64_t k1 = std::min(in, k0 + kc);
      for (int64_t part = 0; part < kPanelWidth; part += 2 * kLanes) {
        for (int64_t i = 0; i < rows; i += per_pass) {
          const int mr = static_cast<int>(std::min<int64_t>(per_pass, rows - i));
          TileOf<kMaxRows>(mr, x + i * in, in, panel + part, k0, k1, k0 == 0,
                           to + i * ldy + part, ldy);
        }
      }
    }
    if (!whole) {
      for (int64_t i = 0; i < rows; ++i) {
        std::copy_n(edge.data() + i * kPanelWidth, out - col, y + i * out + col);
      }
    }
  }
}
