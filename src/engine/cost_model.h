// The analytical cost model of one instance (Mooncake Table 1), in model time.
//
// Prefill of n tokens whose first p are cached: (flops(n) - flops(p)) / (peak * mfu), with
// flops(n) = l (a n^2 d + b n d^2). Because it telescopes, a chunked prefill costs the same as
// one pass. Decode step of a batch: max(memory time, compute time), where memory time reads all
// weights plus the batch's KV over HBM at mbu, and compute is 2 * params per token plus
// 4 l d per context token (attention) at mfu. Immutable after construction; thread-safe.
#pragma once

#include <cstdint>

#include "common/clock.h"
#include "engine/presets.h"

namespace mooncake::engine {

class CostModel {
 public:
  CostModel(ModelSpec model, HardwareSpec hardware, int block_tokens = 512);

  const ModelSpec& model() const { return model_; }
  const HardwareSpec& hardware() const { return hw_; }
  int block_tokens() const { return block_tokens_; }

  double PrefillFlops(int64_t tokens) const;
  // Time to prefill `input` tokens when the first `prefix` are cached (prefix clamped to input).
  Nanos PrefillTime(int64_t input, int64_t prefix) const;
  // One decode step for `batch` requests holding `context_tokens` tokens of KV in total.
  Nanos DecodeStepTime(int64_t batch, int64_t context_tokens) const;
  // A mixed step (chunked prefill): decode of the batch plus a prefill chunk of `chunk` new
  // tokens after `chunk_prefix` tokens: memory of the decode step vs compute of both.
  Nanos MixedStepTime(int64_t batch, int64_t context_tokens, int64_t chunk,
                      int64_t chunk_prefix) const;

  uint64_t KvBytesPerToken() const;
  uint64_t KvBytesPerBlock() const { return KvBytesPerToken() * block_tokens_; }
  uint64_t WeightBytes() const;
  // KV tokens that fit in HBM beside the weights (0 if the weights do not fit).
  int64_t HbmKvTokenCapacity() const;
  // Time to move `bytes` over the instance's NICs.
  Nanos TransferTime(uint64_t bytes) const;

 private:
  double DecodeComputeFlops(int64_t batch, int64_t context_tokens) const;

  ModelSpec model_;
  HardwareSpec hw_;
  int block_tokens_;
};

Nanos SecondsToNanos(double s);
double NanosToSeconds(Nanos n);

}  // namespace mooncake::engine
