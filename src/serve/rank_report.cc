#include "serve/rank_report.h"

#include <algorithm>

namespace mooncake::serve {

void RankReport::Add(const RankReport& other) {
  errors += other.errors;
  blocks_verified += other.blocks_verified;
  blocks_corrupt += other.blocks_corrupt;
  tokens += other.tokens;
  max_batch = std::max(max_batch, other.max_batch);
  store_put_failures += other.store_put_failures;
  peer_loss_aborts += other.peer_loss_aborts;
  rpc_refused_frames += other.rpc_refused_frames;
  refused_data_messages += other.refused_data_messages;
  prefill_staging_high_water =
      std::max(prefill_staging_high_water, other.prefill_staging_high_water);
  prefill_staging_retired += other.prefill_staging_retired;
  decode_waiting_high_water = std::max(decode_waiting_high_water, other.decode_waiting_high_water);
  if (peak_rss_bytes.size() < other.peak_rss_bytes.size()) {
    peak_rss_bytes.resize(other.peak_rss_bytes.size(), 0);
  }
  for (size_t i = 0; i < other.peak_rss_bytes.size(); ++i) {
    peak_rss_bytes[i] = std::max(peak_rss_bytes[i], other.peak_rss_bytes[i]);
  }
  if (ssd.size() < other.ssd.size()) ssd.resize(other.ssd.size(), 0);
  for (size_t i = 0; i < other.ssd.size(); ++i) ssd[i] += other.ssd[i];
  if (first_error.empty()) first_error = other.first_error;
}

void RankReport::AddError(const std::string& message) {
  ++errors;
  if (first_error.empty()) first_error = message;
}

Status RankReport::Validate() const {
  if (ssd.size() > kMaxSsdCounters) return ProtocolError("malformed RankReport: SSD counters");
  if (peak_rss_bytes.size() > kServeParts) return ProtocolError("malformed RankReport: peak RSS");
  return Status::Ok();
}

}  // namespace mooncake::serve
