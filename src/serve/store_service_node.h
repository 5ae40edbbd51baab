// StoreServiceNode: one rank of the store service (job.mode = store, docs/CLIENT.md): the
// store's master (store::MasterNode, on the conductor's rank) or a store rank
// (store::StoreRankNode), with the membership and the end of the job that a serving job has
// (rank_lifecycle.h). It serves no requests: no cost model, no KV layout, no scheduler.
//
// Order: Start -> (the job's listeners and barriers) -> then
//   conductor: StopOthers -> Finish -> CollectReports -> ShutdownOthers
//   store ranks: poll stop_requested -> Finish -> SendReport -> WaitForShutdown.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "serve/rank_lifecycle.h"
#include "serve/serve_config.h"
#include "store/net/topology.h"
#include "store/node/master_node.h"
#include "store/node/store_rank_node.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::serve {

struct StoreServiceDeps {
  transport::Transport& transport;
  transport::Rpc& rpc;
  Rank self, master;
  store::StoreTopology topology;  // every store rank's DRAM segment
  std::span<std::byte> segment;   // a store rank's own (registered and exported at bootstrap)
};

class StoreServiceNode {
 public:
  // `part`: kConductor (the master's rank) or kStore. `config` must outlive the node.
  StoreServiceNode(ServePart part, StoreServiceDeps deps, const ServeConfig& config,
                   store::MasterNodeConfig master, store::StoreRankConfig store_rank);
  ~StoreServiceNode();
  StoreServiceNode(const StoreServiceNode&) = delete;
  StoreServiceNode& operator=(const StoreServiceNode&) = delete;

  // Starts the membership, then the master or the store rank (its SSD tier: an error is the
  // tier's). Registers every handler: call before peers may call.
  Status Start();

  // The end of the job (rank_lifecycle.h).
  void OnConductorLost(HeartbeatSender::LostHandler on_lost) {
    lifecycle_.OnConductorLost(std::move(on_lost));
  }
  bool stop_requested() const { return lifecycle_.stop_requested(); }
  void StopOthers() { lifecycle_.StopOthers(); }
  RankReport Finish() { return lifecycle_.Finish(); }
  Status SendReport(const RankReport& report) { return lifecycle_.SendReport(report); }
  RankReport CollectReports(const RankReport& own) { return lifecycle_.CollectReports(own); }
  void ShutdownOthers() { lifecycle_.ShutdownOthers(); }
  void WaitForShutdown() { lifecycle_.WaitForShutdown(); }
  std::vector<DeadRank> dead_ranks() const { return lifecycle_.dead_ranks(); }
  bool peers_lost() const { return lifecycle_.peers_lost(); }

  // Null on the other part.
  store::MasterNode* master_node() { return master_ ? &*master_ : nullptr; }
  store::StoreRankNode* store_rank() { return store_rank_ ? &*store_rank_ : nullptr; }

 private:
  // A store rank died: its objects with no other replica are lost (no request recomputes them).
  void OnRankDead(const DeadRank& dead);

  ServePart part_;
  StoreServiceDeps deps_;
  store::MasterNodeConfig master_config_;
  store::StoreRankConfig store_rank_config_;
  std::optional<store::MasterNode> master_;
  std::optional<store::StoreRankNode> store_rank_;
  // Declared last, destroyed first: no death reaches a destroyed master.
  RankLifecycle lifecycle_;
};

}  // namespace mooncake::serve
