// MasterNode: the store's master on one rank (the conductor of a serving job, rank 0 of the
// store service): the metadata master served over the RPC, re-replication after a store rank
// dies and, with an SSD tier, the spill coordinator as the master's eviction sink. It is the
// one place that knows how these parts are started, fed and stopped; ServeNode and the store
// service each hold one.
//
// Threading: Start, StopSpilling and Stop on the owner's thread; OnStoreRankDead from the
// membership's thread; AdmitRecovered from the RPC's dispatcher (a store rank's report) or any
// thread (the parts take their own locks).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "store/net/directory.h"
#include "store/net/join_drain_messages.h"
#include "store/net/master_service.h"
#include "store/net/rereplicator.h"
#include "store/net/ssd_messages.h"
#include "store/net/topology.h"
#include "store/node/recovery_totals.h"
#include "store/ssd/ssd_coordinator.h"
#include "store/standby_table.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::store {

struct MasterNodeConfig {
  MasterServiceConfig service;
  Nanos copy_timeout = std::chrono::seconds(30);  // one re-replication copy (the phase timeout)
  bool ssd = false;  // store.ssd: evicted replicas spill to the store ranks' tiers
  SpillCoordinatorConfig spill;
};

class MasterNode {
 public:
  // `transport`, `rpc` and `topology` (every store rank's segment) must outlive the node.
  MasterNode(MasterNodeConfig cfg, transport::Transport& transport, transport::Rpc& rpc,
             const StoreTopology& topology);
  ~MasterNode();
  MasterNode(const MasterNode&) = delete;
  MasterNode& operator=(const MasterNode&) = delete;

  // Registers the segments and every handler, starts the threads. Call before peers may call
  // (before the bootstrap barrier). A standby that takes over passes the table the journal
  // built (store/standby_table.h): the master starts with its segments and committed objects.
  Status Start(const StandbyTable* restored = nullptr);
  // A store rank died: its replicas go and objects left below their replica count are copied
  // again from the survivors. Returns the keys of the objects that had no other replica.
  std::vector<std::string> OnStoreRankDead(Rank rank);
  // Joins and leaves (the master's side of `mooncake store join` / `drain`; issue 33, item 4).
  // A store rank joined the running job: puts may place replicas in `segment` from the next
  // call on, re-replication may copy to and from it, and its SSD recovery report is accepted.
  // The caller must have imported the rank's segment into the transport first.
  Status AddStoreRank(const StoreSegment& segment);
  // `rank` takes nothing new; its objects are copied elsewhere and then dropped there
  // (MetadataMaster::BeginDrain), by the re-replication thread.
  Status BeginDrain(Rank rank);
  // What the draining rank still holds; kicks the copier again while it holds anything (an
  // object whose lease was running or whose put was in flight at the last pass).
  Result<MetadataMaster::DrainState> DrainProgress(Rank rank);
  // The drained rank leaves the master (Busy while it holds anything): after this its process
  // may exit.
  Status FinishDrain(Rank rank);
  // `mooncake store drain` (StoreMsg::kDrain, join_drain_messages.h). The first ask for a rank
  // checks that it may go (a store rank of the job or a joined one; not the last one taking
  // puts; what it holds fits in the others' free space) and begins the drain; every ask answers
  // what it still holds; the ask that finds it empty removes it (FinishDrain) and runs
  // `on_left(rank)` once (dispatcher thread; must not block): the caller tells the rank to exit.
  void ServeDrains(std::function<void(Rank)> on_left);
  // One such ask. NotFound: not a store rank; InvalidArgument: the last one; NoSpace: the
  // others cannot take its bytes. A rank that left answers `left` again (a repeated ask).
  Result<DrainReply> AskDrain(Rank rank);
  // Store rank `rank`'s blocks recovered from its SSD tier enter the master (before requests
  // are admitted). Ignored without an SSD tier. Store ranks send them over the RPC
  // (StoreMsg::kRecoveryReport, StoreRankNode::ReportRecovered), in parts whose counters add up.
  void AdmitRecovered(Rank rank, const RecoveredBlocks& blocks);
  // The store service: answers the directory that processes outside the job ask for
  // (StoreMsg::kDirectory) and their stop (kServiceStop: `on_stop` runs on the dispatcher
  // thread, with the asking process's rank; it must not block).
  void ServeClients(const StoreDirectory& directory, std::function<void(Rank)> on_stop);
  // `mooncake store join` (StoreMsg::kJoin, join_drain_messages.h; after ServeClients): the
  // attached process that asks is moved into the next free join slot of the transport
  // (AdoptAttached), its segment imported and added (AddStoreRank) and listed in the directory;
  // then `admit(rank)` (dispatcher thread; must not block) starts watching it, and the answer
  // names its rank. NoSpace once every join slot was used (slots are never reused);
  // NotSupported in a job with SSD tiers (a joined rank has none).
  void ServeJoins(std::function<Status(Rank)> admit);
  // Stops spilling (completes what is queued): before the store ranks are told to stop.
  void StopSpilling();
  // Stops every thread; idempotent. Handlers stay registered (stop the Rpc before destroying).
  void Stop();

  MasterService& service() { return service_; }
  // What the store ranks reported so far (read it after they all reported: a copy).
  RecoveryTotals recovery() const;
  // Null without an SSD tier.
  const SpillCoordinator* coordinator() const { return coordinator_.get(); }

 private:
  // AskDrain's checks before the first ask begins a drain (master_drain.cc).
  Status CheckDrainable(Rank rank);
  // Every store rank with a segment at the master now (the job's, joined ones; not dead, not
  // left), ascending.
  std::vector<Rank> StoreRanksNow();
  // One join (master_join.cc): the asking process `from` becomes a store rank.
  Result<JoinReply> Join(Rank from, const JoinRequest& ask,
                         const std::function<Status(Rank)>& admit);
  // A store rank's part of its SSD recovery report (StoreMsg::kRecoveryReport).
  Status AdmitReport(Rank from, const RecoveredBlocks& blocks);

  MasterNodeConfig cfg_;
  transport::Transport& transport_;
  transport::Rpc& rpc_;
  const StoreTopology& topology_;
  SteadyClock clock_;
  MasterService service_;
  std::unique_ptr<Rereplicator> rereplicator_;
  // Declared last: destroyed first, so it detaches from the master while the master lives.
  std::unique_ptr<SpillCoordinator> coordinator_;
  mutable std::mutex recovery_mu_;
  RecoveryTotals recovery_;   // guarded by recovery_mu_
  std::vector<Rank> joined_;  // store ranks added by AddStoreRank, guarded by recovery_mu_
  std::mutex directory_mu_;
  StoreDirectory directory_;  // what kDirectory answers; joins add to it (guarded)
  int next_slot_ = 0;         // join slots used so far (guarded by directory_mu_)
  std::mutex drain_mu_;       // one drain ask at a time (check, then begin)
  std::set<int32_t> left_;    // drained ranks that were told to exit, guarded by drain_mu_
};

}  // namespace mooncake::store
