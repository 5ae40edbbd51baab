#include "serve/rank_report.h"

#include <algorithm>

#include "transport/transport.h"

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
  for (const RefusedSender& r : other.refused_data_by_peer) {
    auto it = std::find_if(refused_data_by_peer.begin(), refused_data_by_peer.end(),
                           [&r](const RefusedSender& mine) { return mine.peer == r.peer; });
    if (it == refused_data_by_peer.end()) {
      refused_data_by_peer.push_back(r);
    } else {
      it->count += r.count;
    }
  }
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
  ssd.Add(other.ssd);
  if (first_error.empty()) first_error = other.first_error;
}

void RankReport::SetRefusals(const std::map<std::string, uint64_t>& by_peer) {
  refused_data_messages = 0;
  refused_data_by_peer.clear();
  for (const auto& [peer, count] : by_peer) {
    refused_data_messages += count;
    refused_data_by_peer.push_back({peer, count});
  }
}

std::map<std::string, uint64_t> RankReport::RefusalsByPeer() const {
  std::map<std::string, uint64_t> out;
  for (const RefusedSender& r : refused_data_by_peer) out[r.peer] += r.count;
  return out;
}

void RankReport::AddError(const std::string& message) {
  ++errors;
  if (first_error.empty()) first_error = message;
}

Status RankReport::Validate() const {
  if (peak_rss_bytes.size() > kServeParts) return ProtocolError("malformed RankReport: peak RSS");
  // One rank's senders: at most the transport's bound, plus its "other".
  if (refused_data_by_peer.size() > transport::Transport::kMaxRefusalSenders + 1) {
    return ProtocolError("malformed RankReport: refused data-path senders");
  }
  for (const RefusedSender& r : refused_data_by_peer) {
    if (r.peer.empty() || r.peer.size() > RefusedSender::kMaxName) {
      return ProtocolError("malformed RankReport: a refused data-path sender's name");
    }
  }
  return Status::Ok();
}

}  // namespace mooncake::serve
