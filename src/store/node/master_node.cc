#include "store/node/master_node.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/log.h"
#include "common/threads.h"

namespace mooncake::store {

MasterNode::MasterNode(MasterNodeConfig cfg, transport::Transport& transport, transport::Rpc& rpc,
                       const StoreTopology& topology)
    : cfg_(std::move(cfg)),
      transport_(transport),
      rpc_(rpc),
      topology_(topology),
      service_(cfg_.service, rpc, clock_) {}

MasterNode::~MasterNode() { Stop(); }

Status MasterNode::Start(const StandbyTable* restored) {
  Status s = restored != nullptr ? service_.Restore(*restored) : service_.AddSegments(topology_);
  if (!s.ok()) return s;
  service_.Start();
  rereplicator_ =
      std::make_unique<Rereplicator>(transport_, service_, topology_, cfg_.copy_timeout);
  s = rereplicator_->Start();
  if (!s.ok()) return s;
  if (cfg_.ssd) {
    coordinator_ = std::make_unique<SpillCoordinator>(rpc_, service_, cfg_.spill);
    coordinator_->Start();
  }
  return rpc_.Register<RecoveredBlocks, EmptyMessage>(
      StoreMsg::kRecoveryReport,
      [this](Rank from, const RecoveredBlocks& blocks) { return AdmitReport(from, blocks); });
}

Status MasterNode::AdmitReport(Rank from, const RecoveredBlocks& blocks) {
  // Only the job's store ranks own SSD tiers: a process outside the job (or another role) that
  // sent blocks would make the master point clients at data that is not there.
  bool joined = false;
  {
    std::lock_guard<std::mutex> lock(recovery_mu_);
    joined = std::find(joined_.begin(), joined_.end(), from) != joined_.end();
  }
  if (topology_.Find(from) == nullptr && !joined) {
    return PermissionDenied(fmt::format(
        "rank {} sent an SSD recovery report, but it is not a store rank of the job", from.value));
  }
  AdmitRecovered(from, blocks);
  return Status::Ok();
}

Status MasterNode::AddStoreRank(const StoreSegment& segment) {
  MC_RETURN_IF_ERROR(service_.AddSegment(segment));
  if (rereplicator_) rereplicator_->AddSegment(segment);
  std::lock_guard<std::mutex> lock(recovery_mu_);
  joined_.push_back(segment.rank);
  return Status::Ok();
}

Status MasterNode::BeginDrain(Rank rank) {
  MC_RETURN_IF_ERROR(service_.WithMaster([&](MetadataMaster& m) { return m.BeginDrain(rank); }));
  if (rereplicator_) rereplicator_->Kick();
  return Status::Ok();
}

Result<MetadataMaster::DrainState> MasterNode::DrainProgress(Rank rank) {
  auto state = service_.WithMaster([&](MetadataMaster& m) { return m.Drain(rank); });
  if (state.ok() && !state->drained() && rereplicator_) rereplicator_->Kick();
  return state;
}

Status MasterNode::FinishDrain(Rank rank) { return service_.RemoveDrainedSegment(rank); }

std::vector<std::string> MasterNode::OnStoreRankDead(Rank rank) {
  std::vector<std::string> lost;
  Status s = service_.WithMaster([&](MetadataMaster& m) { return m.RemoveSegment(rank, &lost); });
  if (!s.ok()) log::Warn("removing the segment of rank {}: {}", rank.value, s.ToString());
  if (rereplicator_) rereplicator_->Kick();
  return lost;
}

void MasterNode::AdmitRecovered(Rank rank, const RecoveredBlocks& blocks) {
  if (!coordinator_) return;
  coordinator_->AddRecovered(rank, blocks);
  std::lock_guard<std::mutex> lock(recovery_mu_);
  recovery_.Add(blocks);
}

RecoveryTotals MasterNode::recovery() const { return CopyLocked(recovery_mu_, recovery_); }

void MasterNode::ServeClients(const StoreDirectory& directory, std::function<void(Rank)> on_stop) {
  {
    std::lock_guard<std::mutex> lock(directory_mu_);
    directory_ = directory;
  }
  transport::CheckRegistered(rpc_.Register<EmptyMessage, StoreDirectory>(
      StoreMsg::kDirectory, [this](Rank, const EmptyMessage&) -> Result<StoreDirectory> {
        std::lock_guard<std::mutex> lock(directory_mu_);
        return directory_;
      }));
  // Byte-level: the stop is answered before it runs (on_stop may end the job).
  transport::CheckRegistered(rpc_.Register(
      StoreMsg::kServiceStop, [on_stop = std::move(on_stop)](Rank from, std::span<const std::byte>,
                                                             transport::Responder r) {
        r.Reply({});
        on_stop(from);
      }));
}

void MasterNode::StopSpilling() {
  if (coordinator_) coordinator_->Stop();
}

void MasterNode::Stop() {
  StopSpilling();
  if (rereplicator_) rereplicator_->Stop();
  service_.Stop();
}

}  // namespace mooncake::store
