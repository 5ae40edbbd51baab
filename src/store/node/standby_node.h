// StandbyNode: a standby conductor's store half (issue 33; docs/FAULTS.md "A standby
// conductor"). It applies the active master's journal (StoreMsg::kJournal, store/journal.h) to a
// StandbyTable as it arrives, and on takeover hands the table over to rebuild the master from
// (MasterNode::Start(&table)); from then on every journal batch, the old active's keepalives
// included, is refused with the takeover's "fenced by epoch E".
//
// Threading: the journal handler runs inline on the receiving thread (it only applies entries
// under the node's lock); Promote from any thread.
#pragma once

#include <cstdint>
#include <mutex>

#include "common/status.h"
#include "store/net/topology.h"
#include "store/standby_table.h"
#include "transport/rpc.h"

namespace mooncake::store {

class StandbyNode {
 public:
  // `rpc` must outlive the node. `active`: the rank whose journal is accepted; `topology`: the
  // segments the job starts with.
  StandbyNode(transport::Rpc& rpc, Rank active, const StoreTopology& topology);
  StandbyNode(const StandbyNode&) = delete;
  StandbyNode& operator=(const StandbyNode&) = delete;

  // Registers the journal handler: before the active may send (before the bootstrap barrier).
  void Start();
  // Stops taking the journal (later batches are answered `fenced`, a PeerFailure) and returns
  // the table as the last applied batch left it.
  StandbyTable Promote(const Status& fenced);
  uint64_t entries_applied() const;
  size_t objects() const;

 private:
  Status Apply(Rank from, std::span<const std::byte> bytes);

  transport::Rpc& rpc_;
  Rank active_;
  mutable std::mutex mutex_;
  StandbyTable table_;    // guarded by mutex_
  Status fenced_;         // guarded by mutex_; not OK once promoted
  JournalBatch scratch_;  // guarded by mutex_: decoded into, reusing its capacity
};

}  // namespace mooncake::store
