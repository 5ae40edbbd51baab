#include "serve/store_service_node.h"

#include <algorithm>

#include "common/log.h"

namespace mooncake::serve {
namespace {

// The master's rank conducts; every rank holding a segment is a store rank.
cluster::Membership StoreServiceMembership(const store::StoreTopology& topology, Rank master) {
  std::vector<cluster::Member> stores;
  for (const auto& seg : topology.segments) stores.push_back({seg.rank, cluster::Role::kStore});
  return cluster::Membership(master, stores);
}

}  // namespace

StoreServiceNode::StoreServiceNode(ServePart part, StoreServiceDeps deps, const ServeConfig& config,
                                   store::MasterNodeConfig master,
                                   store::StoreRankConfig store_rank)
    : part_(part),
      deps_(std::move(deps)),
      master_config_(std::move(master)),
      store_rank_config_(std::move(store_rank)),
      lifecycle_(part, deps_.transport, deps_.rpc, deps_.self,
                 StoreServiceMembership(deps_.topology, deps_.master), config) {}

StoreServiceNode::~StoreServiceNode() { lifecycle_.Stop(); }

Status StoreServiceNode::Start() {
  lifecycle_.OnRankDead([this](const DeadRank& d) { OnRankDead(d); });
  lifecycle_.Start();
  if (part_ == ServePart::kConductor) {
    master_.emplace(master_config_, deps_.transport, deps_.rpc, deps_.topology);
    return master_->Start();
  }
  store_rank_.emplace(store_rank_config_, deps_.self, deps_.master, deps_.transport, deps_.rpc,
                      deps_.segment);
  return store_rank_->Start();
}

void StoreServiceNode::OnRankDead(const DeadRank& dead) {
  if (!master_ || deps_.topology.Find(dead.rank) == nullptr) return;
  const std::vector<std::string> lost = master_->OnStoreRankDead(dead.rank);
  if (lost.empty()) return;
  log::Error(
      "store rank {} died holding the only replica of {} object(s): they are lost "
      "(summary.json objects_lost_rank_died)",
      dead.rank.value, lost.size());
}

}  // namespace mooncake::serve
