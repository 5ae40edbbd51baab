// The store's options (store.*): each store rank's DRAM, the replicas of an object, the SSD tier
// (store.ssd, store.recover, ...) and the store service's listener, lease and put deadline
// (docs/STORE.md, docs/CLIENT.md). Errors name the option, the value and what is allowed.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace mooncake::store {

struct StoreOptions {
  uint64_t dram = 64ull << 20;  // bytes registered by each store rank
  int replicas = 1;             // store replicas of each object (KV block)
  // SSD tier (store ranks). Files live in <ssd_dir>/rank<r>; empty ssd_dir: <run folder>/ssd.
  bool ssd = false;
  std::string ssd_dir;
  uint64_t ssd_capacity = 4ull << 30;  // bytes of HDF5 bucket files per store rank
  uint32_t promote_after = 2;          // SSD hits before a block returns to DRAM (0: never)
  bool recover = false;                // --store.recover DIR: ssd on over DIR, must exist
  // store.when_full: true (keep, a store) keeps an object in DRAM until its spill is durable and
  // never lets the SSD tier delete a bucket; false (evict, a KV cache) drops by LRU.
  bool keep_when_full = false;
  uint64_t spill_queue = 16ull << 20;  // per store rank: coordinator bound and tier queue
  // Store service (job.mode = store).
  std::string listen = "0.0.0.0";             // IPv4 address the master and store ranks listen on
  uint16_t port = 0;                          // the master's port (0: any free one)
  std::string connect_file;                   // empty: <run folder>/connect.json
  Nanos lease = Nanos(10'000'000'000);        // a get or exists protects the object this long
  Nanos put_timeout = Nanos(30'000'000'000);  // a put not ended by then is revoked
  int metrics_port = -1;  // store.metrics_port: /metrics on rank 0 (-1: off, 0: any free port)
};

// The option strings as parsed, converted by ConvertStoreOptions.
struct RawStoreOptions {
  std::string dram, ssd, ssd_dir, ssd_capacity, recover, when_full, spill_queue;
  std::string listen, connect_file, lease, put_timeout, metrics_port;
  int promote_after = 2;
  int replicas = 1;
  int port = 0;
};

// Each adds its options to the caller's group (the job's help keeps its groups).
void AddStoreDramOption(boost::program_options::options_description& d, RawStoreOptions* raw);
void AddStoreSsdOptions(boost::program_options::options_description& d, RawStoreOptions* raw);
void AddStoreReplicasOption(boost::program_options::options_description& d, RawStoreOptions* raw);
// Group "Store service (job.mode = store, docs/CLIENT.md)".
boost::program_options::options_description StoreServiceOptionsDescription(RawStoreOptions* raw);

// `service`: the store runs as a service (job.mode = store), where store.when_full defaults to
// keep; in a serving job it defaults to evict.
Status ConvertStoreOptions(const RawStoreOptions& raw, bool service, StoreOptions* out);

}  // namespace mooncake::store
