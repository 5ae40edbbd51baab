#include "engine/cost_model.h"

#include <algorithm>
#include <cmath>

namespace mooncake::engine {

Nanos SecondsToNanos(double s) { return Nanos(static_cast<int64_t>(std::llround(s * 1e9))); }
// Divided, not multiplied by 1e-9 (inexact): 30 s stays 30, not 30.000000000000004.
double NanosToSeconds(Nanos n) { return static_cast<double>(n.count()) / 1e9; }

void StepWork::AddChunk(const CostModel& cost, int64_t prefix, int64_t tokens) {
  if (tokens <= 0) return;
  prefix = std::max<int64_t>(0, prefix);
  prefill_flops += cost.PrefillFlops(prefix + tokens) - cost.PrefillFlops(prefix);
  prefill_kv_tokens += prefix + tokens;
  prefill_tokens += tokens;
}

CostModel::CostModel(ModelSpec model, HardwareSpec hardware, int block_tokens)
    : model_(std::move(model)), hw_(std::move(hardware)), block_tokens_(block_tokens) {}

double CostModel::PrefillFlops(int64_t tokens) const {
  const double n = static_cast<double>(tokens);
  const double d = model_.hidden;
  return model_.layers * (model_.a * n * n * d + model_.b * n * d * d);
}

Nanos CostModel::StepTime(const StepWork& w) const {
  const double kv_tokens = static_cast<double>(w.decode_context_tokens + w.prefill_kv_tokens);
  const double bytes =
      static_cast<double>(WeightBytes()) + static_cast<double>(KvBytesPerToken()) * kv_tokens;
  const double memory_s = bytes / (hw_.hbm_bytes_per_s * hw_.mbu);
  const double flops =
      2.0 * model_.params * static_cast<double>(w.decode_seqs) +
      4.0 * model_.layers * model_.hidden * static_cast<double>(w.decode_context_tokens) +
      w.prefill_flops;
  const double compute_s = flops / (hw_.peak_flops * hw_.mfu);
  return SecondsToNanos(std::max(memory_s, compute_s));
}

Nanos CostModel::PrefillChunkTime(int64_t prefix, int64_t tokens) const {
  if (tokens <= 0) return Nanos(0);
  StepWork w;
  w.AddChunk(*this, prefix, tokens);
  return StepTime(w);
}

Nanos CostModel::PrefillTime(int64_t input, int64_t prefix, int64_t chunk_tokens) const {
  prefix = std::clamp<int64_t>(prefix, 0, input);
  if (chunk_tokens <= 0) return PrefillChunkTime(prefix, input - prefix);
  Nanos total{0};
  for (int64_t done = prefix; done < input; done += chunk_tokens) {
    total += PrefillChunkTime(done, std::min(chunk_tokens, input - done));
  }
  return total;
}

Nanos CostModel::DecodeStepTime(int64_t batch, int64_t context_tokens) const {
  StepWork w;
  w.decode_seqs = batch;
  w.decode_context_tokens = context_tokens;
  return StepTime(w);
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

uint64_t ScaledKvPieceBytes(const CostModel& cost, double kv_scale) {
  const int layers = std::max(1, cost.model().layers);
  const double piece = static_cast<double>(cost.KvBytesPerBlock()) * kv_scale / layers;
  return std::max<uint64_t>(8, static_cast<uint64_t>(piece) / 8 * 8);
}

Nanos CostModel::TransferTime(uint64_t bytes) const {
  return SecondsToNanos(static_cast<double>(bytes) / hw_.nic_bytes_per_s);
}

}  // namespace mooncake::engine
