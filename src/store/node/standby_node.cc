#include "store/node/standby_node.h"

#include "common/log.h"
#include "store/net/messages.h"

namespace mooncake::store {
namespace {

std::vector<std::pair<Rank, uint64_t>> SegmentsOf(const StoreTopology& topology) {
  std::vector<std::pair<Rank, uint64_t>> out;
  for (const StoreSegment& s : topology.segments) out.emplace_back(s.rank, s.length);
  return out;
}

}  // namespace

StandbyNode::StandbyNode(transport::Rpc& rpc, Rank active, const StoreTopology& topology)
    : rpc_(rpc), active_(active), table_(SegmentsOf(topology)) {}

void StandbyNode::Start() {
  transport::CheckRegistered(rpc_.RegisterInline(
      StoreMsg::kJournal,
      [this](Rank from, std::span<const std::byte> bytes, transport::Responder r) {
        Status s = Apply(from, bytes);
        if (s.ok()) {
          r.Reply({});
        } else {
          r.Fail(s);
        }
      }));
}

Status StandbyNode::Apply(Rank from, std::span<const std::byte> bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!fenced_.ok()) return fenced_;
  if (from != active_) {
    return PermissionDenied("rank " + std::to_string(from.value) +
                            " sent a journal, but the active conductor is rank " +
                            std::to_string(active_.value));
  }
  MC_RETURN_IF_ERROR(WireDecodeInto(bytes, JournalBatch::kWireName, &scratch_));
  return table_.Apply(scratch_);
}

StandbyTable StandbyNode::Promote(const Status& fenced) {
  std::lock_guard<std::mutex> lock(mutex_);
  fenced_ = fenced;
  return table_;
}

uint64_t StandbyNode::entries_applied() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return table_.next_seq() - 1;
}

size_t StandbyNode::objects() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return table_.objects();
}

}  // namespace mooncake::store
