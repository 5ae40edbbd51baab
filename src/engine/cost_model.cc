#include "engine/cost_model.h"

#include <algorithm>
#include <cmath>

namespace mooncake::engine {

Nanos SecondsToNanos(double s) { return Nanos(static_cast<int64_t>(std::llround(s * 1e9))); }
// Divided, not multiplied by 1e-9 (inexact): 30 s stays 30, not 30.000000000000004.
double NanosToSeconds(Nanos n) { return static_cast<double>(n.count()) / 1e9; }

CostModel::CostModel(ModelSpec model, HardwareSpec hardware, int block_tokens)
    : model_(std::move(model)), hw_(std::move(hardware)), block_tokens_(block_tokens) {}

double CostModel::PrefillFlops(int64_t tokens) const {
  const double n = static_cast<double>(tokens);
  const double d = model_.hidden;
  return model_.layers * (model_.a * n * n * d + model_.b * n * d * d);
}

Nanos CostModel::PrefillTime(int64_t input, int64_t prefix) const {
  prefix = std::clamp<int64_t>(prefix, 0, input);
  const double flops = PrefillFlops(input) - PrefillFlops(prefix);
  return SecondsToNanos(flops / (hw_.peak_flops * hw_.mfu));
}

double CostModel::DecodeComputeFlops(int64_t batch, int64_t context_tokens) const {
  return 2.0 * model_.params * static_cast<double>(batch) +
         4.0 * model_.layers * model_.hidden * static_cast<double>(context_tokens);
}

Nanos CostModel::DecodeStepTime(int64_t batch, int64_t context_tokens) const {
  return MixedStepTime(batch, context_tokens, 0, 0);
}

Nanos CostModel::MixedStepTime(int64_t batch, int64_t context_tokens, int64_t chunk,
                               int64_t chunk_prefix) const {
  const double bytes = static_cast<double>(WeightBytes()) +
                       static_cast<double>(KvBytesPerToken()) * static_cast<double>(context_tokens);
  const double memory_s = bytes / (hw_.hbm_bytes_per_s * hw_.mbu);
  double flops = DecodeComputeFlops(batch, context_tokens);
  if (chunk > 0) flops += PrefillFlops(chunk_prefix + chunk) - PrefillFlops(chunk_prefix);
  const double compute_s = flops / (hw_.peak_flops * hw_.mfu);
  return SecondsToNanos(std::max(memory_s, compute_s));
}

uint64_t CostModel::KvBytesPerToken() const {
  return static_cast<uint64_t>(model_.layers) * 2ULL *
         static_cast<uint64_t>(model_.hidden / model_.gqa) *
         static_cast<uint64_t>(model_.bytes_per_element);
}

uint64_t CostModel::WeightBytes() const {
  return static_cast<uint64_t>(model_.params * model_.bytes_per_element);
}

int64_t CostModel::HbmKvTokenCapacity() const {
  if (hw_.hbm_bytes <= WeightBytes()) return 0;
  return static_cast<int64_t>((hw_.hbm_bytes - WeightBytes()) / KvBytesPerToken());
}

Nanos CostModel::TransferTime(uint64_t bytes) const {
  return SecondsToNanos(static_cast<double>(bytes) / hw_.nic_bytes_per_s);
}

}  // namespace mooncake::engine
