// The end of the store service on every rank (job.mode = store, docs/CLIENT.md): waiting for the
// stop while the conductor tells drained store ranks to leave, then the stop in order (spills
// finished, every store rank's report collected, the summary written).
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "serve/store_service_node.h"
#include "serve/store_summary.h"

namespace mooncake::serve {

// What the conductor's drain handler (dispatcher thread, must not block) hands to its main
// thread: drained store ranks to tell to leave (RankLifecycle::Dismiss calls them).
class PendingLeaves {
 public:
  void Add(Rank rank);
  std::vector<Rank> Take();

 private:
  std::mutex mu_;
  std::vector<Rank> ranks_;
};

// The conductor waits for a stop (`signalled()`, or `stop_asked`: kServiceStop), telling
// drained ranks to leave meanwhile. Store ranks wait for the conductor's stop or leave; one that
// was signalled itself stops alone when none comes within `phase_timeout`. A standby that takes
// over conducts from then on.
void WaitForServiceStop(StoreServiceNode& node, const std::function<bool()>& signalled,
                        const std::atomic<bool>& stop_asked, PendingLeaves& leaves,
                        Nanos phase_timeout);

// The stop in order: the conductor stops spilling, then the store ranks, collects their reports
// and writes the summary (`summary`), and the exit status to `status_file` (empty: nowhere) as
// soon as it is known; a store rank reports (when the stop came from the conductor). Returns
// the exit code.
int EndStoreService(StoreServiceNode& node, const StoreSummaryInputs& summary,
                    const std::string& status_file, Rank self);

}  // namespace mooncake::serve
