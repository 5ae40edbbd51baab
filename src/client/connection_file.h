// The connection file of a store service job (job.mode = store, docs/CLIENT.md): the one thing
// a process outside the job needs to attach. JSON, written by the job's rank 0 with mode 0600
// (it holds the job token) beside its path and renamed into place, so a reader never sees half.
//
//   {"format": "mooncake-connect", "version": 1, "mooncake_version": "0.1.0",
//    "cluster_id": "...", "token": "<32 hex digits>", "world_size": 4,
//    "master": {"rank": 0, "addresses": ["10.1.2.3:41000", "127.0.0.1:41000"]},
//    "conductors": [{"rank": 0, "addresses": [...], "active": true},
//                   {"rank": 1, "addresses": ["10.1.2.3:41873", ...], "active": false}],
//    "epoch": 1,
//    "store": {"ranks": [1, 2, 3], "dram_per_rank": 1073741824, "ssd": false, "replicas": 1},
//    "run_dir": "runs/20261125-101500", "host": "node17", "pid": 4242, "created": "..."}
//
// `master` is the active conductor (what older clients read); `conductors` lists every conductor
// of a job with a standby (docs/FAULTS.md), the active one included, so that a client whose
// master dies can reach the standby that takes over; `epoch` is the membership epoch the writer
// conducted in (the new conductor rewrites the file with a higher one). A file without them (one
// conductor, written before they existed) reads as that one conductor, epoch 0.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "transport/rpc.h"

namespace mooncake::client {

inline constexpr int kConnectionFileVersion = 1;
// Bounds every field is checked against before anything is allocated from it (a file that
// names a job of 2^31 - 1 ranks made the client allocate without bound).
inline constexpr size_t kMaxConnectionFileBytes = 64 * 1024;
inline constexpr int kMaxJobRanks = 65537;  // a master and StoreDirectory's 65536 store ranks
inline constexpr size_t kMaxMasterAddresses = 64;
inline constexpr size_t kMaxAddressLength = 261;  // a 255-byte host name, ':' and a port
inline constexpr size_t kMaxTextFieldLength = 4096;
inline constexpr uint32_t kMaxReplicas = 64;
inline constexpr size_t kMaxConductors = 8;

// One conductor of the job: its rank and the addresses its listener takes attaches at.
struct ConductorAddress {
  int rank = 0;
  std::vector<std::string> addresses;  // "host:port", best first
  bool active = false;                 // the master when the file was written
  bool operator==(const ConductorAddress&) const = default;
};

struct ConnectionInfo {
  std::string mooncake_version;
  std::string cluster_id;
  transport::JobToken token;
  int world_size = 0;
  int master_rank = 0;
  std::vector<std::string> master_addresses;  // "host:port", best first
  // Every conductor, the active one (master_rank, master_addresses) included. Never empty after
  // ParseConnectionFile; a writer may leave it empty for a job with one conductor.
  std::vector<ConductorAddress> conductors;
  uint64_t epoch = 0;  // the membership epoch the writer conducted in; 0: not said
  std::vector<int> store_ranks;
  uint64_t dram_per_rank = 0;  // bytes
  bool ssd = false;
  uint32_t replicas = 1;
  std::string run_dir;
  std::string host;
  int64_t pid = 0;  // rank 0's process
  std::string created;
};

// Writes `info` to `path` with mode 0600 (never readable by others, even for an instant).
Status WriteConnectionFile(const std::string& path, const ConnectionInfo& info);
// Reads and checks a connection file; errors name the file and the field. Logs a warning
// (ReadableByOthersWarning) when the file is readable by its group or others, unless told not to
// (a client reading it again after its master changed has warned once).
Result<ConnectionInfo> ReadConnectionFile(const std::string& path, bool warn_if_readable = true);
// A warning naming `path` and its mode when group or others may read it (it holds the job
// token); "" when they may not (or it cannot be stat'ed).
std::string ReadableByOthersWarning(const std::string& path);
// The checks of ReadConnectionFile on a file's text (`path` names it in errors). Every field is
// bounded (the constants above) before anything is sized from it.
Result<ConnectionInfo> ParseConnectionFile(std::string_view text, const std::string& path);
// The file's JSON text for `info` (what WriteConnectionFile writes).
std::string ConnectionFileText(const ConnectionInfo& info);

// "host:port" split; InvalidArgument naming `what` when it is not that.
Status SplitHostPort(const std::string& address, const std::string& what, std::string* host,
                     uint16_t* port);
// 32 hex digits to a token, and the token's 16 credential bytes (what a listener checks).
Result<transport::JobToken> ParseToken(const std::string& hex);
std::vector<std::byte> TokenBytes(const transport::JobToken& token);

}  // namespace mooncake::client
