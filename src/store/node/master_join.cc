// MasterNode's side of `mooncake store join` (master_node.h, ServeJoins): a process attached
// from outside the job becomes a store rank of it.
#include <fmt/format.h>

#include "common/log.h"
#include "common/units.h"
#include "store/net/messages.h"
#include "store/node/master_node.h"
#include "transport/join_slots.h"

namespace mooncake::store {

Result<JoinReply> MasterNode::Join(Rank from, const JoinRequest& ask,
                                   const std::function<Status(Rank)>& admit) {
  if (cfg_.ssd) {
    // Its replicas could not spill: store.when_full = keep would pin them in DRAM for good.
    return NotSupported(
        "this store job spills to SSD tiers (store.ssd = on): a store rank without one cannot "
        "join it (joins of SSD tiers are not supported yet)");
  }
  auto descriptor = transport::RemoteDescriptor::Decode(ask.segment);
  if (!descriptor.ok()) return descriptor.status();
  std::lock_guard<std::mutex> lock(directory_mu_);
  if (next_slot_ >= transport::kMaxJoinedRanks) {
    return Status(ErrorCode::kNoSpace,
                  fmt::format("all {} join slots of this job were used: no more store ranks can "
                              "join it",
                              transport::kMaxJoinedRanks));
  }
  const Rank rank{transport_.world_size() + next_slot_++};
  auto slots = transport::JoinSlotsOf(transport_);
  if (!slots.ok()) return slots.status();
  MC_RETURN_IF_ERROR((*slots)->AdoptAttached(from, rank));
  MC_RETURN_IF_ERROR(transport_.Import(rank, *descriptor).WithContext("the joining segment"));
  MC_RETURN_IF_ERROR(AddStoreRank(StoreSegment{rank, descriptor->addr, descriptor->length}));
  StoreRankEntry entry;
  entry.rank = rank;
  entry.hosts = ask.hosts;
  entry.port = ask.port;
  entry.segment = ask.segment;
  directory_.store_ranks.push_back(std::move(entry));
  if (admit) MC_RETURN_IF_ERROR(admit(rank));
  log::Info("store rank {} joined ({} DRAM, listening on {}:{})", rank.value,
            FormatBytes(descriptor->length), ask.hosts.front(), ask.port);
  JoinReply reply;
  reply.rank = rank.value;
  return reply;
}

void MasterNode::ServeJoins(std::function<Status(Rank)> admit) {
  transport::CheckRegistered(rpc_.Register<JoinRequest, JoinReply>(
      StoreMsg::kJoin, [this, admit = std::move(admit)](Rank from, const JoinRequest& ask) {
        auto reply = Join(from, ask, admit);
        if (!reply.ok()) log::Warn("a store rank could not join: {}", reply.status().ToString());
        return reply;
      }));
}

}  // namespace mooncake::store
