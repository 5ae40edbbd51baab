// MasterNode's answer to `mooncake store drain` (master_node.h, AskDrain): checks, begins,
// reports and finishes the drain of one store rank.
#include <fmt/format.h>

#include <algorithm>

#include "common/log.h"
#include "common/units.h"
#include "store/net/messages.h"
#include "store/node/master_node.h"

namespace mooncake::store {

std::vector<Rank> MasterNode::StoreRanksNow() {
  std::vector<Rank> ranks;
  for (const StoreSegment& s : topology_.segments) ranks.push_back(s.rank);
  {
    std::lock_guard<std::mutex> lock(recovery_mu_);
    ranks.insert(ranks.end(), joined_.begin(), joined_.end());
  }
  std::sort(ranks.begin(), ranks.end());
  std::erase_if(ranks, [&](Rank r) {
    return !service_.WithMaster([&](MetadataMaster& m) { return m.SegmentStats(r).ok(); });
  });
  return ranks;
}

Status MasterNode::CheckDrainable(Rank rank) {
  const std::vector<Rank> ranks = StoreRanksNow();
  if (std::find(ranks.begin(), ranks.end(), rank) == ranks.end()) {
    std::string names;
    for (Rank r : ranks) names += (names.empty() ? "" : ", ") + std::to_string(r.value);
    return NotFound(fmt::format("rank {} is not a store rank of this job (store ranks now: {})",
                                rank.value, names));
  }
  uint64_t used = 0, free_elsewhere = 0;
  int takers = 0;
  for (Rank r : ranks) {
    auto stats = service_.WithMaster([&](MetadataMaster& m) { return m.SegmentStats(r); });
    if (!stats.ok()) continue;
    if (r == rank) {
      used = stats->used;
    } else if (!service_.WithMaster([&](MetadataMaster& m) { return m.Drain(r).ok(); })) {
      ++takers;  // Drain(r) answers only for draining ranks: this one takes puts
      free_elsewhere += stats->free;
    }
  }
  if (takers == 0) {
    return InvalidArgument(fmt::format(
        "rank {} is the last store rank taking puts: its objects would have nowhere to go",
        rank.value));
  }
  if (used > free_elsewhere) {
    return Status(ErrorCode::kNoSpace,
                  fmt::format("rank {} holds {}, the other store ranks have {} free: not enough "
                              "to take its objects (join a store rank first)",
                              rank.value, FormatBytes(used), FormatBytes(free_elsewhere)));
  }
  return Status::Ok();
}

Result<DrainReply> MasterNode::AskDrain(Rank rank) {
  std::lock_guard<std::mutex> lock(drain_mu_);
  DrainReply reply;
  reply.rank = rank.value;
  reply.copied = rereplicator_ ? rereplicator_->copied() : 0;
  if (left_.count(rank.value) != 0) {
    reply.left = true;
    return reply;
  }
  auto state = DrainProgress(rank);
  // Not draining yet (InvalidArgument), or no segment at all (NotFound: CheckDrainable names
  // the store ranks there are).
  if (!state.ok() && (state.status().code() == ErrorCode::kInvalidArgument ||
                      state.status().code() == ErrorCode::kNotFound)) {
    MC_RETURN_IF_ERROR(CheckDrainable(rank));
    MC_RETURN_IF_ERROR(BeginDrain(rank));
    log::Info("store rank {}: drain begun", rank.value);
    state = DrainProgress(rank);
  }
  if (!state.ok()) return state.status();
  reply.dram_replicas = state->dram_replicas;
  reply.ssd_replicas = state->ssd_replicas;
  reply.used_bytes = state->used_bytes;
  if (state->drained()) {
    MC_RETURN_IF_ERROR(FinishDrain(rank));
    left_.insert(rank.value);
    reply.left = true;
    log::Info("store rank {}: drained, leaves the store", rank.value);
  }
  return reply;
}

void MasterNode::ServeDrains(std::function<void(Rank)> on_left) {
  // Byte-level: the rank's leave (on_left) follows the answer that says it left.
  transport::CheckRegistered(rpc_.Register(
      StoreMsg::kDrain, [this, on_left = std::move(on_left)](
                            Rank, std::span<const std::byte> request, transport::Responder r) {
        auto ask = DrainRequest::Decode(request);
        if (!ask.ok()) return r.Fail(ask.status());
        const bool had_left = [&] {
          std::lock_guard<std::mutex> lock(drain_mu_);
          return left_.count(ask->rank) != 0;
        }();
        auto reply = AskDrain(Rank{ask->rank});
        if (!reply.ok()) return r.Fail(reply.status());
        r.Reply(reply->Encode());
        if (reply->left && !had_left && on_left) on_left(Rank{ask->rank});
      }));
}

}  // namespace mooncake::store
