// store_bench --ops meta: metadata operations only (no object bytes move). A batch of fresh keys
// goes through PutStart, PutEnd and Get (three operations per key, each a batched call), once as
// RPCs from a client to the master rank and once straight into the MetadataMaster on one thread
// of rank 0 (the master's own rate, without the RPC around it).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "store/net/master_service.h"
#include "transport/rpc.h"

namespace mooncake::bench {

// PutStart + PutEnd + Get of `keys` (each of `size` bytes, never seen before) as three batched
// RPCs to `master`, each within `timeout`. The first failed key's status, else OK.
Status MetaRpcRound(transport::Rpc& rpc, Rank master, std::span<const std::string> keys,
                    uint64_t size, Nanos timeout);

struct MasterMetaRate {
  uint64_t ops = 0;    // three per key
  double seconds = 0;  // inside the master's calls only (key strings are made untimed)
  // The same intervals in this thread's CPU time: on a loaded machine the wall-clock intervals
  // also hold the time other processes had the core; this is the rate of one core.
  double cpu_seconds = 0;
  uint64_t errors = 0;  // keys whose PutStart, PutEnd or Get failed
  std::string first_error;
};
// Rounds of PutStart + PutEnd + Get over `batch` fresh keys of `size` bytes, called on the
// service's MetadataMaster from this thread under its lock, for at least `min_time`. Keys are
// prefixed with `tag` (unique per case). Evictions a full segment needs are part of the rate.
MasterMetaRate MeasureMasterMeta(store::MasterService& service, const std::string& tag, int batch,
                                 uint64_t size, Nanos min_time);

}  // namespace mooncake::bench
