// What each serving rank reports when the job ends: its errors and its decode / prefill counters.
// The conductor sums them into the summary.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/wire_fields.h"
#include "store/node/store_rank_node.h"

namespace mooncake::serve {

// Refused data-path messages from one sender, as Transport::refused_data_messages_by_peer names it.
struct RefusedSender {
  static constexpr size_t kMaxName = 128;
  std::string peer;
  uint64_t count = 0;
  MC_WIRE_FIELDS(peer, count)
};

struct RankReport : WireMessage<RankReport> {
  static constexpr size_t kServeParts = 4;  // conductor, store, prefill, decode
  uint64_t errors = 0, blocks_verified = 0, blocks_corrupt = 0, tokens = 0, max_batch = 0;
  uint64_t store_put_failures = 0;
  uint64_t peer_loss_aborts = 0;    // work dropped because a peer was declared dead
  uint64_t rpc_refused_frames = 0;  // frames without the job token (transport/rpc.h)
  // Data-path messages that did not come on the endpoint of the rank they named (forgeries).
  uint64_t refused_data_messages = 0;
  std::vector<RefusedSender> refused_data_by_peer;  // the same by sender, summed by name
  // Peak resident set (getrusage ru_maxrss) by ServePart: the largest over that part's ranks.
  std::vector<uint64_t> peak_rss_bytes;
  uint64_t prefill_staging_high_water = 0;  // bytes, the largest over prefill ranks
  // Bytes of staging left to transfers given up in flight (kept until the transport closes).
  uint64_t prefill_staging_retired = 0;
  uint64_t decode_waiting_high_water = 0;  // requests, the largest over decode ranks
  store::SsdRankCounters ssd;  // a store rank's SSD tier counters (store.ssd = on), summed
  std::string first_error;

  // Takes the transport's refusals by sender; the total is their sum (one snapshot, so the two
  // always agree).
  void SetRefusals(const std::map<std::string, uint64_t>& by_peer);
  std::map<std::string, uint64_t> RefusalsByPeer() const;
  // Adds `other`'s counters; keeps the first error seen.
  void Add(const RankReport& other);
  void AddError(const std::string& message);

  MC_WIRE_MESSAGE(RankReport, errors, blocks_verified, blocks_corrupt, tokens, max_batch,
                  store_put_failures, peer_loss_aborts, rpc_refused_frames, refused_data_messages,
                  peak_rss_bytes, prefill_staging_high_water, prefill_staging_retired,
                  decode_waiting_high_water, ssd, first_error, refused_data_by_peer)
  Status Validate() const;
};

}  // namespace mooncake::serve
