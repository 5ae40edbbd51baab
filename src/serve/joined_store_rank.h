// A store rank that joins a running store service job (`mooncake store join`, issue 33, item 4;
// docs/STORE.md "Joins and drains"): it registers its DRAM segment, attaches to the job's master,
// listens for clients and asks the master for a rank; then it serves as the job's own store
// ranks do (a StoreServiceNode of part kStore) until the job stops it or drains it. app parses
// the command and reads the connection file; this holds the rank.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::serve {

// What a joining rank needs of the job (its connection file) and of its own options.
struct JoinSettings {
  transport::JobToken token;          // the job's RPC token
  std::vector<std::byte> credential;  // the same token as the job's listeners admit it
  Rank master{0};
  uint64_t dram = 0;               // bytes of this rank's segment
  std::string listen = "0.0.0.0";  // IPv4 address it listens on for clients
  Nanos heartbeat_interval{0}, failure_timeout{0};
};

// Attaches `transport` to the master's rank at one of its addresses (the caller knows them).
using AttachMaster = std::function<Status(transport::Transport&, Rank master)>;

class JoinedStoreRank {
 public:
  // `transport` is this process's, created for the job's world (it takes a join slot).
  explicit JoinedStoreRank(std::unique_ptr<transport::Transport> transport);
  // Stops the RPC and closes the transport (2 s at most).
  ~JoinedStoreRank();
  JoinedStoreRank(const JoinedStoreRank&) = delete;
  JoinedStoreRank& operator=(const JoinedStoreRank&) = delete;

  // Registers the segment, attaches to the master, listens, asks the master to join and takes
  // the rank it gives (rank()).
  Status Join(const JoinSettings& settings, const AttachMaster& attach);

  // Serves until the job stops or drains this rank, or `signalled()` (polled every 20 ms).
  // Returns the exit status: 0 after a stop with no error or after a drain, 1 otherwise. Ends
  // the process with exit 4 when the master is lost or fences this rank (a stall).
  // `connect_file` is named in the line that says the rank joined.
  int Serve(const JoinSettings& settings, const std::string& connect_file,
            const std::function<bool()>& signalled);

  Rank rank() const { return rank_; }

 private:
  std::unique_ptr<transport::Transport> transport_;
  std::unique_ptr<transport::Rpc> rpc_;
  transport::MemoryRegion segment_;
  Rank rank_{-1};
  Rank master_{0};
};

}  // namespace mooncake::serve
