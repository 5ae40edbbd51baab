// Measuring the reference transformer (src/model) for `mooncake calibrate` (docs/MODEL.md
// "Calibrating"): prefill passes against chunk and cached prefix, decode steps against batch and
// context, each the median wall time of repeats, on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"
#include "engine/calibration.h"
#include "engine/presets.h"
#include "model/config.h"
#include "model/transformer.h"

namespace mooncake::engine {

// The cost model's description of a reference model: Table 1's flops(n) = l (a n^2 d + b n d^2)
// counted for this shape (b: 2 FLOPs per weight of a layer's q, k, v, o and MLP matrices over d^2;
// a: causal attention, QK^T and PV over the positions up to each token, 2 q_dim / d), float32
// weights and KV (bytes_per_element 4), every parameter read per pass. InvalidArgument when the
// cost model's KV size per layer (hidden / gqa) is not this model's (kv_heads x head_dim).
Result<ModelSpec> ReferenceModelSpec(const model::ModelConfig& config);

// What a pass's time is: wall time (what a live run's TTFT and TBT measure), or the process's
// CPU time (steadier on a machine shared with other work; the same when BLIS runs one thread).
enum class CalibrationClock { kWall, kProcessCpu };

struct CalibrationGrid {
  std::vector<int64_t> prefill_chunks;    // new tokens of a prefill pass
  std::vector<int64_t> prefill_prefixes;  // cached tokens before it
  std::vector<int64_t> decode_batches;    // sequences in a decode step
  std::vector<int64_t> decode_contexts;   // KV tokens of each sequence
  int repeats = 5;                        // timed passes per point (after one untimed)
  int32_t block_tokens = 512;             // the KV cache's block, as a live run's
  CalibrationClock clock = CalibrationClock::kWall;

  size_t Points() const {
    return prefill_chunks.size() * prefill_prefixes.size() +
           decode_batches.size() * decode_contexts.size();
  }
};

// Called after each point is measured; `index` counts from 1 to `total`.
using CalibrationProgress =
    std::function<void(const CalibrationPoint& point, size_t index, size_t total)>;

// Every prefill (chunk, prefix) pair and every decode (batch, context) pair of the grid, in that
// order. The caches are built once per prefix or context and copied for each timed pass, so only
// the pass itself is timed. InvalidArgument for an empty or non-positive grid value.
Result<std::vector<CalibrationPoint>> MeasureReference(const model::Transformer& model,
                                                       const CalibrationGrid& grid,
                                                       const CalibrationProgress& progress);

// The fastest of `repeats` matmuls model::Linear(512 x 1024 by 1024 x 1024), FLOP/s, timed by
// `clock`: the engine's own matmul speed, the peak that mfu is a share of.
double MeasureMatmulFlopsPerSecond(int repeats, CalibrationClock clock);

// The fastest of `repeats` streaming reads of `bytes`, bytes/s, timed by `clock`.
double MeasureReadBytesPerSecond(size_t bytes, int repeats, CalibrationClock clock);

}  // namespace mooncake::engine
