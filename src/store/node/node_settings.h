// The store's two nodes' settings from the store's options (store.*, store/node/store_options.h):
// what the live job's master rank and store ranks construct their MasterNode and StoreRankNode
// with.
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "store/node/master_node.h"
#include "store/node/store_options.h"
#include "store/node/store_rank_node.h"

namespace mooncake::store {

// The master's first object version: the wall clock in nanoseconds, a restart epoch that outranks
// every version an earlier run over the same SSD folder wrote (recovery lifts it further when a
// folder holds higher ones, e.g. after the clock went back).
uint64_t WallClockVersion();

// The master: a rank silent for `failure_timeout` is declared dead, so the master suspects it
// for twice that; copies and spills wait up to `phase_timeout`; a fresh restart epoch.
MasterNodeConfig MasterNodeConfigFrom(const StoreOptions& options, Nanos failure_timeout,
                                      Nanos phase_timeout);

// Store rank `rank`'s set-up: its tier under <ssd_dir>/rank<r>, or <run_dir>/ssd/rank<r> when
// store.ssd_dir is empty. `model_preset` and `kv_layout`: what the bucket files say of the
// blocks.
StoreRankConfig StoreRankConfigFrom(const StoreOptions& options, const std::string& run_dir,
                                    int rank, std::string model_preset, std::string kv_layout);

}  // namespace mooncake::store
