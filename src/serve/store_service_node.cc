#include "serve/store_service_node.h"

#include <algorithm>

#include "common/log.h"

namespace mooncake::serve {
namespace {

// The ranks the master's rank watches, stops and waits for: every store rank but itself.
std::vector<int> OtherStoreRanks(const store::StoreTopology& topology, Rank self) {
  std::vector<int> ranks;
  for (const auto& seg : topology.segments) {
    if (seg.rank != self) ranks.push_back(seg.rank.value);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

}  // namespace

StoreServiceNode::StoreServiceNode(ServePart part, StoreServiceDeps deps, const ServeConfig& config,
                                   store::MasterNodeConfig master,
                                   store::StoreRankConfig store_rank)
    : part_(part),
      deps_(std::move(deps)),
      master_config_(std::move(master)),
      store_rank_config_(std::move(store_rank)),
      lifecycle_(part, deps_.transport, deps_.rpc, deps_.self, deps_.master,
                 OtherStoreRanks(deps_.topology, deps_.self), config) {}

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
