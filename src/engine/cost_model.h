// The analytical cost model of one instance (Mooncake Table 1), in model time.
//
// Every forward pass (an engine step) is a roofline: max(compute time, memory time).
// - Compute: prefill of n new tokens after p cached or already computed ones costs
//   flops(p + n) - flops(p), with flops(n) = l (a n^2 d + b n d^2); a decode token costs
//   2 * params plus 4 l d per context token (attention). Over peak * mfu.
// - Memory: every pass reads all weights once, plus the KV that attention reads: the decode
//   batch's context, and for each prefill chunk its cached prefix and the chunk itself. Over
//   HBM bandwidth * mbu.
// So a prompt whose prefix is all cached still costs at least weights / HBM bandwidth (about
// 11 ms for LLaMA3-70B on 8 x A800), and a chunked prefill pays the weights once per chunk.
// Immutable after construction; thread-safe.
#pragma once

#include <cstdint>

#include "common/clock.h"
#include "engine/presets.h"

namespace mooncake::engine {

class CostModel;

// The work of one forward pass: decode tokens and prefill chunks batched together.
struct StepWork {
  int64_t decode_seqs = 0;            // sequences generating one token each
  int64_t decode_context_tokens = 0;  // KV tokens those sequences attend over
  double prefill_flops = 0;           // of the chunks below
  int64_t prefill_kv_tokens = 0;      // KV the chunks' attention reads: prefix + chunk, summed
  int64_t prefill_tokens = 0;         // new tokens of the chunks

  // Adds a chunk of `tokens` new tokens after `prefix` tokens of the same prompt.
  void AddChunk(const CostModel& cost, int64_t prefix, int64_t tokens);
};

class CostModel {
 public:
  CostModel(ModelSpec model, HardwareSpec hardware, int block_tokens = 512);

  const ModelSpec& model() const { return model_; }
  const HardwareSpec& hardware() const { return hw_; }
  int block_tokens() const { return block_tokens_; }

  double PrefillFlops(int64_t tokens) const;
  // One forward pass: max(compute, memory) as described at the top.
  Nanos StepTime(const StepWork& work) const;
  // One prefill pass of `tokens` new tokens after `prefix` (0 when tokens <= 0).
  Nanos PrefillChunkTime(int64_t prefix, int64_t tokens) const;
  // Prefill of `input` tokens whose first `prefix` are cached (clamped to [0, input]), in passes
  // of `chunk_tokens` tokens counted from the prefix (0 = one pass): the sum of the passes. The
  // prefill role, the simulator and the scheduler's forecast all call this (or, chunk by chunk,
  // PrefillChunkTime with the same boundaries), so the three agree.
  Nanos PrefillTime(int64_t input, int64_t prefix, int64_t chunk_tokens = 0) const;
  // One decode step for `batch` requests holding `context_tokens` tokens of KV in total.
  Nanos DecodeStepTime(int64_t batch, int64_t context_tokens) const;

  uint64_t KvBytesPerToken() const;
  uint64_t KvBytesPerBlock() const { return KvBytesPerToken() * block_tokens_; }
  uint64_t WeightBytes() const;
  // KV tokens that fit in HBM beside the weights (0 if the weights do not fit).
  int64_t HbmKvTokenCapacity() const;
  // Time to move `bytes` over the instance's NICs.
  Nanos TransferTime(uint64_t bytes) const;

 private:
  ModelSpec model_;
  HardwareSpec hw_;
  int block_tokens_;
};

// Bytes of one model layer's piece of a KV block as a live run moves and stores it:
// max(8, real block bytes x kv_scale / layers) rounded down to 8 (engine/kv_layout.h). A block is
// `layers` such pieces; the simulator sizes the store's objects with it.
uint64_t ScaledKvPieceBytes(const CostModel& cost, double kv_scale);

Nanos SecondsToNanos(double s);
double NanosToSeconds(Nanos n);

}  // namespace mooncake::engine
