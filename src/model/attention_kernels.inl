// The attention kernels, written once over an eight-lane vector type and compiled twice
// (attention_avx2.cc with AVX2 + FMA, attention_portable.cc without). The including file
// defines, before including this one, inside its own namespace:
//   V8 (eight floats), Fma(a, b, c) (a * b + c rounded once per lane), Broadcast, Load, Store.
// (`#pragma GCC unroll`: the loops over queries and dimensions keep their accumulators in
// registers; GCC does not unroll them at -O2 by itself, and clang reads the pragma too.)
// A lane's arithmetic is the same in both: Fma is the instruction or std::fma, and nothing here
// lets the compiler fuse or reorder (-ffp-contract=off, no -ffast-math).

namespace {

constexpr int kLanes = 8;

// Scores of `nq` queries (1..4) at the positions [from, to) of one block: score[i][t] for t
// relative to the block. One fused chain over the dimensions per score.
template <int NQ>
void ScoresOf(const float* const* q, int32_t hd, const float* keys, int64_t bt, int64_t from,
              int64_t to, float* const* score) {
  int64_t t = from;
  for (; t + 2 * kLanes <= to; t += 2 * kLanes) {
    V8 acc[NQ][2] = {};
    for (int32_t d = 0; d < hd; ++d) {
      const float* kd = keys + int64_t{d} * bt + t;
      const V8 k0 = Load(kd), k1 = Load(kd + kLanes);
      #pragma GCC unroll 8
      for (int i = 0; i < NQ; ++i) {
        const V8 qb = Broadcast(q[i][d]);
        acc[i][0] = Fma(qb, k0, acc[i][0]);
        acc[i][1] = Fma(qb, k1, acc[i][1]);
      }
    }
    #pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) {
      Store(score[i] + t, acc[i][0]);
      Store(score[i] + t + kLanes, acc[i][1]);
    }
  }
  for (; t + kLanes <= to; t += kLanes) {
    V8 acc[NQ] = {};
    for (int32_t d = 0; d < hd; ++d) {
      const V8 k0 = Load(keys + int64_t{d} * bt + t);
      #pragma GCC unroll 8
      for (int i = 0; i < NQ; ++i) acc[i] = Fma(Broadcast(q[i][d]), k0, acc[i]);
    }
    #pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) Store(score[i] + t, acc[i]);
  }
  for (; t < to; ++t) {  // the same chain, one position at a time
    #pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) {
      float acc = 0.0f;
      for (int32_t d = 0; d < hd; ++d) acc = std::fma(q[i][d], keys[int64_t{d} * bt + t], acc);
      score[i][t] = acc;
    }
  }
}

void Scores(const float* const* q, int nq, int32_t hd, const float* keys, int64_t bt,
            int64_t from, int64_t to, float* const* score) {
  switch (nq) {
    case 1: return ScoresOf<1>(q, hd, keys, bt, from, to, score);
    case 2: return ScoresOf<2>(q, hd, keys, bt, from, to, score);
    case 3: return ScoresOf<3>(q, hd, keys, bt, from, to, score);
    default: return ScoresOf<4>(q, hd, keys, bt, from, to, score);
  }
}

// Scores of `NQ` queries (1 or 2) at 16 positions in each of two places (two blocks, or two
// stretches of one): keys `ka` and `kb` point at the places' first position, dimension d's at
// + d * bt. Twice the independent chains of one place: a chain's fused multiply-adds wait on
// each other, and a decode step's two queries per kv head give only four per place.
template <int NQ>
void ScoresPairOf(const float* const* q, int32_t hd, const float* ka, const float* kb, int64_t bt,
                  float* const* sa, float* const* sb) {
  V8 acc[NQ][4] = {};
  for (int32_t d = 0; d < hd; ++d) {
    const float* pa = ka + int64_t{d} * bt;
    const float* pb = kb + int64_t{d} * bt;
    const V8 k0 = Load(pa), k1 = Load(pa + kLanes), k2 = Load(pb), k3 = Load(pb + kLanes);
    #pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) {
      const V8 qb = Broadcast(q[i][d]);
      acc[i][0] = Fma(qb, k0, acc[i][0]);
      acc[i][1] = Fma(qb, k1, acc[i][1]);
      acc[i][2] = Fma(qb, k2, acc[i][2]);
      acc[i][3] = Fma(qb, k3, acc[i][3]);
    }
  }
  #pragma GCC unroll 8
  for (int i = 0; i < NQ; ++i) {
    Store(sa[i], acc[i][0]);
    Store(sa[i] + kLanes, acc[i][1]);
    Store(sb[i], acc[i][2]);
    Store(sb[i] + kLanes, acc[i][3]);
  }
}

void ScoresPair(const float* const* q, int nq, int32_t hd, const float* ka, const float* kb,
                int64_t bt, float* const* sa, float* const* sb) {
  if (nq == 1) return ScoresPairOf<1>(q, hd, ka, kb, bt, sa, sb);
  ScoresPairOf<2>(q, hd, ka, kb, bt, sa, sb);
}

// The same scores as ScoresOf for one or two queries at the positions [0, n) of one block, a
// dimension's row of K at a time: each score's chain goes on in `score` (d = 0 starts it from
// zero, as ScoresOf's accumulators start), so K is read front to back, where ScoresOf's 16
// positions at a time read every row at once (64 streams at head dim 64). For long rows: a
// short one's chains would wait on each other through memory.
// K's rows this many on are asked for too (a row is 2 KiB at 512-token blocks).
constexpr int64_t kAheadRows = 4;
template <int NQ>
void ScoresRowsOf(const float* const* q, int32_t hd, const float* keys, const float* values,
                  int64_t bt, int64_t n, float* const* score) {
  for (int32_t d = 0; d < hd; ++d) {
    const float* row = keys + int64_t{d} * bt;
    // V's row d, which weighted_v reads next, is asked for meanwhile (a hint: nothing changes
    // but when it arrives), so that its reads go on while these scores are computed.
    for (int64_t t = 0; t < n; t += 16) {
      __builtin_prefetch(values + int64_t{d} * bt + t);
      __builtin_prefetch(row + kAheadRows * bt + t);
    }
    V8 qb[NQ];
    #pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) qb[i] = Broadcast(q[i][d]);
    int64_t t = 0;
    for (; t + kLanes <= n; t += kLanes) {
      const V8 k = Load(row + t);
      #pragma GCC unroll 8
      for (int i = 0; i < NQ; ++i) {
        const V8 acc = d == 0 ? V8{} : Load(score[i] + t);
        Store(score[i] + t, Fma(qb[i], k, acc));
      }
    }
    for (; t < n; ++t) {
      #pragma GCC unroll 8
      for (int i = 0; i < NQ; ++i) score[i][t] = std::fma(q[i][d], row[t], d == 0 ? 0.0f : score[i][t]);
    }
  }
}

void ScoresRows(const float* const* q, int nq, int32_t hd, const float* keys,
                const float* values, int64_t bt, int64_t n, float* const* score) {
  if (nq == 1) return ScoresRowsOf<1>(q, hd, keys, values, bt, n, score);
  ScoresRowsOf<2>(q, hd, keys, values, bt, n, score);
}

// Positions [from, to) of one block (`block_start` its first absolute position) into the lanes
// of `acc`: position t into lane t % 8, scalar where a vector would not start on lane 0.
template <int NQ, int ND>
void AccumulateV(const float* const* p, const float* const* v, int64_t block_start, int64_t from,
                 int64_t to, V8 (&acc)[NQ][ND]) {
  int64_t t = from;
  for (; t < to && (block_start + t) % kLanes != 0; ++t) {
    const int lane = static_cast<int>((block_start + t) % kLanes);
    #pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i)
      #pragma GCC unroll 8
      for (int j = 0; j < ND; ++j)
        acc[i][j][lane] = std::fma(p[i][block_start + t], v[j][t], acc[i][j][lane]);
  }
  for (; t + kLanes <= to; t += kLanes) {
    V8 vj[ND];
    #pragma GCC unroll 8
    for (int j = 0; j < ND; ++j) vj[j] = Load(v[j] + t);
    #pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) {
      const V8 pi = Load(p[i] + block_start + t);
      #pragma GCC unroll 8
      for (int j = 0; j < ND; ++j) acc[i][j] = Fma(pi, vj[j], acc[i][j]);
    }
  }
  for (; t < to; ++t) {
    const int lane = static_cast<int>((block_start + t) % kLanes);
    #pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i)
      #pragma GCC unroll 8
      for (int j = 0; j < ND; ++j)
        acc[i][j][lane] = std::fma(p[i][block_start + t], v[j][t], acc[i][j][lane]);
  }
}

float SumLanes(V8 a) {
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// Dimensions [d, d + ND) of the weighted V of `NQ` queries: the positions all of them attend to
// together, then each query's own further positions alone, into the same lanes.
template <int NQ, int ND>
void WeightedVDims(const float* const* p, const int64_t* length, const KvCache& cache,
                   int32_t layer, int32_t kv_head, int32_t d, float* const* out) {
  const KvShape& shape = cache.shape();
  const int64_t bt = shape.block_tokens;
  int64_t shared = length[0];
  for (int i = 1; i < NQ; ++i) shared = std::min(shared, length[i]);
  V8 acc[NQ][ND] = {};
  const float* v[ND];
  for (int64_t start = 0; start < shared; start += bt) {
    const float* base = cache.block(start / bt).data() + shape.Index(layer, 1, kv_head, d, 0);
    #pragma GCC unroll 8
    for (int j = 0; j < ND; ++j) v[j] = base + j * bt;
    AccumulateV<NQ, ND>(p, v, start, 0, std::min(bt, shared - start), acc);
  }
  #pragma GCC unroll 8
  for (int i = 0; i < NQ; ++i) {
    V8 own[1][ND];
    #pragma GCC unroll 8
    for (int j = 0; j < ND; ++j) own[0][j] = acc[i][j];
    for (int64_t t = shared; t < length[i];) {
      const int64_t start = t / bt * bt;
      const float* base = cache.block(start / bt).data() + shape.Index(layer, 1, kv_head, d, 0);
      #pragma GCC unroll 8
      for (int j = 0; j < ND; ++j) v[j] = base + j * bt;
      const int64_t to = std::min(bt, length[i] - start);
      AccumulateV<1, ND>(&p[i], v, start, t - start, to, own);
      t = start + to;
    }
    #pragma GCC unroll 8
    for (int j = 0; j < ND; ++j) out[i][d + j] = SumLanes(own[0][j]);
  }
}

template <int NQ>
void WeightedVOf(const float* const* p, const int64_t* length, const KvCache& cache,
                 int32_t layer, int32_t kv_head, float* const* out) {
  const int32_t hd = cache.shape().head_dim;
  // NQ x kDims independent chains (8): fewer would wait on each other's multiply-adds.
  constexpr int kDims = NQ <= 2 ? 4 : 2;
  int32_t d = 0;
  for (; d + kDims <= hd; d += kDims) {
    WeightedVDims<NQ, kDims>(p, length, cache, layer, kv_head, d, out);
  }
  for (; d < hd; ++d) WeightedVDims<NQ, 1>(p, length, cache, layer, kv_head, d, out);
}

void WeightedV(const float* const* p, const int64_t* length, int nq, const KvCache& cache,
               int32_t layer, int32_t kv_head, float* const* out) {
  switch (nq) {
    case 1: return WeightedVOf<1>(p, length, cache, layer, kv_head, out);
    case 2: return WeightedVOf<2>(p, length, cache, layer, kv_head, out);
    case 3: return WeightedVOf<3>(p, length, cache, layer, kv_head, out);
    default: return WeightedVOf<4>(p, length, cache, layer, kv_head, out);
  }
}

void Softmax(float* s, int64_t n, float scale) {
  const int64_t full = n / kLanes * kLanes, tail = n - full;
  const V8 vscale = Broadcast(scale);
  V8 vmax = Broadcast(-INFINITY);
  for (int64_t t = 0; t < full; t += kLanes) {
    const V8 v = Mul(Load(s + t), vscale);
    Store(s + t, v);
    vmax = Max(v, vmax);
  }
  float max = -INFINITY;
  for (int64_t t = full; t < n; ++t) {
    s[t] *= scale;
    max = s[t] > max ? s[t] : max;
  }
  for (int i = 0; i < kLanes; ++i) max = vmax[i] > max ? vmax[i] : max;  // exact in any order
  const V8 vm = Broadcast(max);
  V8 sum8 = {};
  for (int64_t t = 0; t < full; t += kLanes) {
    const V8 e = Exp(Sub(Load(s + t), vm));
    Store(s + t, e);
    sum8 = Add(sum8, e);
  }
  if (tail > 0) {  // the last positions through the same Exp, in their lanes
    float last[kLanes] = {};
    std::copy(s + full, s + n, last);
    const V8 e = Exp(Sub(Load(last), vm));
    for (int64_t i = 0; i < tail; ++i) {
      s[full + i] = e[i];
      sum8[i] = sum8[i] + e[i];
    }
  }
  const float sum = SumLanes(sum8);
  const V8 vsum = Broadcast(sum);
  for (int64_t t = 0; t < full; t += kLanes) Store(s + t, Div(Load(s + t), vsum));
  for (int64_t t = full; t < n; ++t) s[t] /= sum;
}

}  // namespace

const AttentionKernelSet kKernels{Scores, ScoresPair, ScoresRows, Softmax, WeightedV};
