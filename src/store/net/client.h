// StoreClient: the store's client API (prefill and decode ranks, benchmarks, tests). Metadata goes
// to the master over the Rpc; bytes move one-sided between the caller's buffers and the store
// ranks' segments (the master never touches data).
//
// - Put: PutStart (the master allocates `replicas` regions on distinct store ranks) -> one-sided
//   WRITE of the value to every replica -> PutEnd(XXH3 checksum) makes it visible. A failed write
//   revokes the put (PutRevoke). When the write failed because its store rank failed
//   (PeerFailure: a rank that died and is not yet declared dead), the client tells the master
//   (kSuspectRanks: it then places nothing new there) and places the put again, up to
//   kPutAttempts times within the call's deadline; otherwise it returns the write's error.
// - Get: the master answers size, checksum, replicas and a lease; the client READs the first DRAM
//   replica straight into `out`, verifies the checksum (unless verify_checksum is off), and on a
//   failed read or a checksum mismatch tries the next replica. A read that ends after the lease
//   ran out is returned only if its checksum verifies (else LeaseExpired): the lease is what
//   keeps the region from being evicted and reused while it is read.
// - The span-taking forms are zero-copy: bytes go straight from / into the caller's memory (UCX
//   accepts unregistered local memory; memory registered with the transport is faster).
//
// Errors are values: NotFound (absent, evicted or in flight), AlreadyExists (objects are
// immutable), NoSpace, Busy, LeaseExpired, PeerFailure (a store rank failed the transfer),
// Corrupt (every replica failed its checksum), Timeout (the call's deadline passed),
// InvalidArgument (e.g. `out` smaller than the object; the size is in the message).
//
// Every call has a deadline of `timeout` from its start, RPCs and transfers included. When a
// transfer times out, the call waits up to one more `timeout` for the transport to stop using
// the caller's buffer before it returns Timeout; only a transfer still running after that (a
// peer that neither answers nor fails) may touch the buffer until the transport closes.
//
// Threading: a StoreClient may be used from several threads at once (its only mutable state,
// the staging regions of store ranks it imported, is behind a mutex).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "store/net/growing_topology.h"
#include "store/net/messages.h"
#include "store/net/topology.h"
#include "store/types.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::store {

// Placements a put tries when its store rank fails its write (see Put above).
inline constexpr int kPutAttempts = 3;

// Which of a put's calls to the master went unanswered (BatchPut's `unanswered`, per key): the
// call failed with PeerFailure or Timeout, so the master may have died or stopped. kStart: its
// put-start (nothing of this put can become visible: a put is visible only after its put-end).
// kEnd: its put-end (it may or may not have become visible).
enum class PutUnanswered : uint8_t { kNo = 0, kStart = 1, kEnd = 2 };

// A call to the master that failed this way may mean the master is gone (store clients outside
// the job then look for the conductor that took over, src/client).
inline bool MasterUnanswered(const Status& s) {
  return s.code() == ErrorCode::kPeerFailure || s.code() == ErrorCode::kTimeout;
}

struct StoreClientConfig {
  Nanos timeout = std::chrono::seconds(10);  // deadline of every call
  bool verify_checksum = true;
  // Threads that copy and hash one large call (>= 4 MiB) in parallel, the caller included. On
  // shared memory the copy runs on the calling thread and one core's memory bandwidth bounds it.
  int copy_threads = 1;
};

class StoreClient {
 public:
  // `transport` and `rpc` must outlive the client. `master` is the rank serving MasterService.
  StoreClient(transport::Transport& transport, transport::Rpc& rpc, Rank master,
              StoreTopology topology, StoreClientConfig cfg = {});

  Status Put(const std::string& key, std::span<const std::byte> value,
             const ReplicateConfig& cfg = {});
  // Reads the object into `out` (at least its size); returns the object's size.
  Result<size_t> Get(const std::string& key, std::span<std::byte> out);
  // Copying form: allocates a buffer of the object's size.
  Result<std::vector<std::byte>> GetValue(const std::string& key);
  // The object's size in bytes (NotFound when not visible); reads no bytes.
  Result<uint64_t> GetSize(const std::string& key);
  // OK when visible (and takes a lease), NotFound otherwise.
  Status Exists(const std::string& key);
  Status Remove(const std::string& key);

  // Batch forms: one RPC per phase for the whole batch and one transfer batch for all bytes.
  // Results are per key, in order. At most kMaxBatchKeys keys.
  // `abandoned` (optional) is set when a write was given up while it may still be in flight
  // (it timed out or its store rank failed, even if the key was then placed again elsewhere
  // and succeeded): UCX may still read that value's bytes until the transport closes, so the
  // caller must not free or reuse `values` past this call (Transport::RetainUntilClosed).
  // `unanswered` (optional) gets one entry per key (PutUnanswered above).
  std::vector<Status> BatchPut(std::span<const std::string> keys,
                               std::span<const std::span<const std::byte>> values,
                               const ReplicateConfig& cfg = {}, bool* abandoned = nullptr,
                               std::vector<PutUnanswered>* unanswered = nullptr);
  // `abandoned` (optional) is set when a read was given up while it may still be in flight (it
  // timed out, or its store rank failed, possibly before a retry from another replica
  // succeeded): the transport may write into that buffer later, until it closes, so the caller
  // must neither free nor trust `outs` past this call; hand them to
  // Transport::RetainUntilClosed and use fresh ones.
  std::vector<Result<size_t>> BatchGet(std::span<const std::string> keys,
                                       std::span<const std::span<std::byte>> outs,
                                       bool* abandoned = nullptr);
  // Copying form of BatchGet: each object in a buffer of its size.
  std::vector<Result<std::vector<std::byte>>> BatchGetValues(std::span<const std::string> keys);
  // One byte per key (1 visible, 0 not); an error when the RPC itself failed.
  Result<std::vector<uint8_t>> BatchExists(std::span<const std::string> keys);
  std::vector<Status> BatchRemove(std::span<const std::string> keys);

  // The master's counters (objects, evictions, time spent serving exists and get).
  Result<StatsResponse> MasterStats();

  // The rank serving MasterService. SetMaster moves every later call to another rank (a store
  // client outside the job follows the conductor that took over); any thread.
  Rank master() const { return Rank{master_->load(std::memory_order_acquire)}; }
  void SetMaster(Rank master) { master_->store(master.value, std::memory_order_release); }
  // Calls to the master made by the calling thread that went unanswered (MasterUnanswered), by
  // any StoreClient: a caller compares it before and after a call to tell whether the master
  // failed it (not a store rank).
  static uint64_t MasterUnansweredOnThisThread();

  const StoreTopology& topology() const { return topology_->Now(); }
  // Store ranks that joined the job after the client started: `resolver` attaches to one the
  // master names and returns its segment (GrowingTopology). Set before the first call.
  void SetRankResolver(GrowingTopology::Resolver resolver) {
    topology_->SetResolver(std::move(resolver));
  }
  // RPCs this client has sent to the master (every phase, retry and revoke): what a call cost
  // in round trips (a batch get of any number of keys up to kMaxBatchKeys is one).
  uint64_t master_calls() const { return master_calls_->load(std::memory_order_relaxed); }

 private:
  struct Deadline {
    Nanos at;
    Nanos Remaining(const Clock& c) const { return at - c.Now(); }
  };
  Deadline Start() const { return Deadline{clock_.Now() + cfg_.timeout}; }
  // The master's answer to a get of `key` alone (size, checksum, replicas; a lease is taken).
  Result<ObjectView> Lookup(const std::string& key);
  // The master's answer to a get of `keys` (one RPC; a lease is taken on every key found),
  // one entry per key, decoded into `*resp` (DecodeInto: its capacity is reused).
  Status LookupBatch(std::span<const std::string> keys, const Deadline& d, GetResponse* resp);
  // This thread's GetResponse for BatchGet and BatchGetValues to decode into (never nested).
  static GetResponse& ReplyScratch();
  // Reads every key `resp` found into outs[i] (DRAM replicas in rounds, then SSD-only ones),
  // verifying checksums; `sent` is when the lookup left (leases run from then). Defined in
  // client_get.cc.
  std::vector<Result<size_t>> ReadFound(std::span<const std::string> keys,
                                        std::span<const std::span<std::byte>> outs,
                                        const GetResponse& resp, Nanos sent, const Deadline& d,
                                        bool* abandoned);
  // A call to the master within `d`. The batched hot paths send requests encoded straight from
  // the caller's keys and decode answers into reused scratch; the others go typed.
  Result<std::vector<std::byte>> Call(StoreMsg type, std::span<const std::byte> request,
                                      const Deadline& d);
  template <typename Req, typename Resp>
  Result<Resp> Call(StoreMsg type, const Req& request, const Deadline& d) {
    auto reply = Call(type, WireEncode(request), d);
    if (!reply.ok()) return reply.status();
    return WireDecode<Resp>(*reply, WireNameOf<Resp>());
  }
  std::vector<Status> KeysCall(StoreMsg type, std::span<const std::string> keys, const Deadline& d);
  // Moves every request (all READs or all WRITEs); with `sums`, also hashes the bytes moved by
  // each request j with (*hash)[j] set (all when `hash` is null) into (*sums)[j]. Returns each
  // request's status. Defined in client_move.cc.
  std::vector<Status> MoveAndHash(const std::vector<transport::TransferRequest>& reqs,
                                  const std::vector<char>* hash, const Deadline& d,
                                  std::vector<uint64_t>* sums);
  void MoveGroup(const std::vector<transport::TransferRequest>& reqs, size_t first, size_t last,
                 const std::vector<char>* hash, const Deadline& d, std::vector<Status>* out,
                 std::vector<uint64_t>* sums);
  // Reads the keys `which` (SSD replicas only) through the store ranks holding them into
  // `outs`, verifying the master's checksum; sets `status` per key. The store rank stages the
  // blocks in registered memory and this client READs them one-sided (kSsdStage), several
  // pieces in flight; store ranks without staging answer the bytes in the reply (kSsdRead).
  // Defined in client_ssd.cc.
  void ReadFromSsd(std::span<const std::string> keys, std::span<const std::span<std::byte>> outs,
                   const GetResponse& resp, const std::vector<size_t>& which, const Deadline& d,
                   std::vector<Status>* status);
  struct SsdPiece;  // client_ssd.cc: keys of one request to one store rank
  // The staging region each store rank answered with, as imported into the transport.
  struct StagingImports {
    std::mutex mu;
    std::map<int, std::vector<std::byte>> encoded;       // rank -> the descriptor imported
    std::map<int, std::pair<uint64_t, uint64_t>> range;  // rank -> its [addr, addr + length)
  };
  struct SsdGet {  // one ReadFromSsd call's arguments
    std::span<const std::string> keys;
    std::span<const std::span<std::byte>> outs;
    const GetResponse& resp;
    const Deadline& d;
    std::vector<Status>* status;
  };
  void ReadSsdPiece(const SsdGet& g, const SsdPiece& piece);
  void ReadSsdInReply(const SsdGet& g, const SsdPiece& piece);
  // Imports store rank `rank`'s staging region (once per region) and returns its address range.
  Result<std::pair<uint64_t, uint64_t>> ImportStaging(Rank rank, std::span<const std::byte> desc);
  // A transfer that ended this way (Timeout, PeerFailure) may not have stopped: UCX can still
  // read or write its buffer later (BatchGet's and BatchPut's `abandoned`). client_get.cc.
  static bool MayStillBeInFlight(const Status& s);
  // One attempt at putting `keys`: PutStart, the writes, then PutEnd or PutRevoke. Keys that
  // failed only because a store rank failed their write get (*retry)[i] = 1, and that rank goes
  // into `*failing`: revoked, they may be placed again. Defined in client.cc.
  std::vector<Status> PutOnce(std::span<const std::string> keys,
                              std::span<const std::span<const std::byte>> values,
                              const ReplicateConfig& cfg, const Deadline& d,
                              std::vector<char>* retry, std::vector<Rank>* failing, bool* abandoned,
                              std::vector<PutUnanswered>* unanswered);
  // The last step of a put: ends the keys whose writes all succeeded, revokes the others.
  // Keys whose put-end went unanswered get (*unanswered)[i] = kEnd.
  void EndOrRevoke(std::span<const std::string> keys, std::span<const uint64_t> sums,
                   const PutStartResponse& started, const Deadline& d, std::vector<Status>* out,
                   std::vector<PutUnanswered>* unanswered);
  // Waits for `batch` and returns each request's status (Timeout for those still running).
  std::vector<Status> Finish(transport::TransferBatch& batch, const Deadline& d);

  transport::Transport& transport_;
  transport::Rpc& rpc_;
  // Shared: the client stays movable.
  std::shared_ptr<std::atomic<int32_t>> master_;
  std::shared_ptr<GrowingTopology> topology_;  // shared: the client stays movable
  StoreClientConfig cfg_;
  SteadyClock clock_;
  std::shared_ptr<StagingImports> staging_ = std::make_shared<StagingImports>();  // movable
  std::shared_ptr<std::atomic<uint64_t>> master_calls_ = std::make_shared<std::atomic<uint64_t>>(0);
};

}  // namespace mooncake::store
