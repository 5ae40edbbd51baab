#include "engine/reference_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <numeric>

#include "model/kv_cache.h"
#include "model/matmul.h"

namespace mooncake::engine {
namespace {

double NowSeconds(CalibrationClock clock) {
  timespec t{};
  clock_gettime(clock == CalibrationClock::kWall ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// `point` with the median wall time of grid.repeats calls of `pass` after an untimed warm-up;
// `prepare` runs before each call, off the clock (a cache copy).
template <typename Prepare, typename Pass>
Result<CalibrationPoint> Measure(const CalibrationGrid& grid, CalibrationPoint point,
                                 Prepare prepare, Pass pass) {
  std::vector<double> times;
  for (int r = -1; r < grid.repeats; ++r) {  // r = -1: the warm-up
    prepare();
    const double start = NowSeconds(grid.clock);
    MC_RETURN_IF_ERROR(pass());
    if (r >= 0) times.push_back(NowSeconds(grid.clock) - start);
  }
  point.measured_s = Median(times);
  return point;
}

// Any ids in the vocabulary: the time of a pass does not depend on them.
std::vector<int32_t> Tokens(int64_t count, int32_t vocab) {
  std::vector<int32_t> ids(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) ids[i] = static_cast<int32_t>((i * 7919 + 13) % vocab);
  return ids;
}

Status CheckValues(const std::vector<int64_t>& values, const char* what, int64_t minimum) {
  if (values.empty()) return InvalidArgument(fmt::format("calibration grid: no {}", what));
  for (int64_t v : values) {
    if (v < minimum) {
      return InvalidArgument(
          fmt::format("calibration grid: {} {} (must be >= {})", what, v, minimum));
    }
  }
  return Status::Ok();
}

// Extends `cache` with prompt tokens up to `length` (no-op when it holds as many).
Status GrowTo(const model::Transformer& m, const std::vector<int32_t>& prompt, int64_t length,
              model::KvCache* cache) {
  if (cache->tokens() >= length) return Status::Ok();
  std::vector<float> logits;
  return m.Prefill(
      std::span<const int32_t>(prompt).subspan(cache->tokens(), length - cache->tokens()), cache,
      &logits);
}

}  // namespace

Result<ModelSpec> ReferenceModelSpec(const model::ModelConfig& c) {
  MC_RETURN_IF_ERROR(c.Validate());
  ModelSpec m;
  m.name = c.name;
  m.layers = c.num_layers;
  m.hidden = c.hidden_size;
  m.gqa = c.num_heads / c.num_kv_heads;
  if (m.hidden % m.gqa != 0 ||
      static_cast<int64_t>(m.hidden / m.gqa) != int64_t{c.num_kv_heads} * c.head_dim) {
    return InvalidArgument(fmt::format(
        "model {}: the cost model's KV per layer is hidden / gqa = {} / {} values, this model's "
        "is kv_heads x head_dim = {} x {}",
        c.name, m.hidden, m.gqa, c.num_kv_heads, c.head_dim));
  }
  const double d = c.hidden_size;
  const double q_dim = double(c.num_heads) * c.head_dim;
  const double kv_dim = double(c.num_kv_heads) * c.head_dim;
  const double layer_weights = 2 * d * q_dim + 2 * d * kv_dim + 3 * d * c.intermediate_size;
  m.b = 2 * layer_weights / (d * d);
  m.a = 2 * q_dim / d;
  m.bytes_per_element = sizeof(float);
  m.params = static_cast<double>(c.ParameterCount());
  return m;
}

Result<std::vector<CalibrationPoint>> MeasureReference(const model::Transformer& m,
                                                       const CalibrationGrid& grid,
                                                       const CalibrationProgress& progress) {
  MC_RETURN_IF_ERROR(CheckValues(grid.prefill_chunks, "prefill chunk", 1));
  MC_RETURN_IF_ERROR(CheckValues(grid.prefill_prefixes, "prefill prefix", 0));
  MC_RETURN_IF_ERROR(CheckValues(grid.decode_batches, "decode batch", 1));
  MC_RETURN_IF_ERROR(CheckValues(grid.decode_contexts, "decode context", 1));
  if (grid.repeats < 1 || grid.block_tokens < 1) {
    return InvalidArgument("calibration grid: repeats and block tokens must be >= 1");
  }
  const int32_t vocab = m.config().vocab_size;
  const model::KvShape shape = m.KvShapeFor(grid.block_tokens);
  std::vector<int64_t> prefixes = grid.prefill_prefixes, contexts = grid.decode_contexts;
  std::sort(prefixes.begin(), prefixes.end());
  std::sort(contexts.begin(), contexts.end());
  const int64_t longest = std::max(
      prefixes.back() + *std::max_element(grid.prefill_chunks.begin(), grid.prefill_chunks.end()),
      contexts.back());
  const std::vector<int32_t> prompt = Tokens(longest, vocab);
  std::vector<CalibrationPoint> points;
  const size_t total = grid.Points();
  auto record = [&](CalibrationPoint p) {
    points.push_back(p);
    if (progress) progress(p, points.size(), total);
  };
  std::vector<float> logits;

  model::KvCache base(shape);  // grows through the prefixes in order
  for (int64_t prefix : prefixes) {
    MC_RETURN_IF_ERROR(GrowTo(m, prompt, prefix, &base));
    for (int64_t chunk : grid.prefill_chunks) {
      const auto tokens = std::span<const int32_t>(prompt).subspan(prefix, chunk);
      model::KvCache cache(shape);
      auto point = Measure(
          grid, {.kind = CalibrationPoint::Kind::kPrefill, .prefix = prefix, .tokens = chunk},
          [&] { cache = base; }, [&] { return m.Prefill(tokens, &cache, &logits); });
      if (!point.ok()) return point.status();
      record(*point);
    }
  }

  model::KvCache context_cache(shape);
  for (int64_t context : contexts) {
    MC_RETURN_IF_ERROR(GrowTo(m, prompt, context, &context_cache));
    for (int64_t batch : grid.decode_batches) {
      std::vector<model::KvCache> caches(static_cast<size_t>(batch), context_cache);
      std::vector<model::KvCache*> pointers;
      for (model::KvCache& c : caches) pointers.push_back(&c);
      const std::vector<int32_t> next(static_cast<size_t>(batch), prompt[0]);
      // Each step appends a token: the context grows by repeats + 1 over the nominal one.
      auto point = Measure(
          grid, {.kind = CalibrationPoint::Kind::kDecode, .batch = batch, .context = context},
          [] {}, [&] { return m.DecodeStep(pointers, next, &logits); });
      if (!point.ok()) return point.status();
      record(*point);
    }
  }
  return points;
}

double MeasureMatmulFlopsPerSecond(int repeats, CalibrationClock clock) {
  constexpr int64_t kRows = 512, kIn = 1024, kOut = 1024;
  std::vector<float> x(kRows * kIn, 0.5f), w(kOut * kIn, 0.25f), y(kRows * kOut);
  double best = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const double start = NowSeconds(clock);
    model::Linear(x.data(), kRows, kIn, w.data(), kOut, y.data());
    best = std::max(best, 2.0 * kRows * kIn * kOut / (NowSeconds(clock) - start));
  }
  return best;
}

double MeasureReadBytesPerSecond(size_t bytes, int repeats, CalibrationClock clock) {
  std::vector<uint64_t> data(std::max<size_t>(1, bytes / sizeof(uint64_t)));
  std::iota(data.begin(), data.end(), uint64_t{1});
  double best = 0;
  volatile uint64_t sink = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const double start = NowSeconds(clock);
    // Four independent sums, so the read is not bound by one addition's latency.
    uint64_t s[4] = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 4 <= data.size(); i += 4) {
      s[0] += data[i];
      s[1] += data[i + 1];
      s[2] += data[i + 2];
      s[3] += data[i + 3];
    }
    for (; i < data.size(); ++i) s[0] += data[i];
    sink = sink + s[0] + s[1] + s[2] + s[3];
    best = std::max(
        best, static_cast<double>(data.size() * sizeof(uint64_t)) / (NowSeconds(clock) - start));
  }
  return best;
}

}  // namespace mooncake::engine
