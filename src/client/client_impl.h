// Client::Impl, the state behind client.h's Client, shared by client.cc (attaching, the calls,
// closing) and client_follow.cc (moving to a new master, docs/CLIENT.md "When the master
// changes"). Internal: not installed.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/connection_file.h"
#include "client/master_follower.h"
#include "store/net/client.h"
#include "transport/attach_numbers.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::client {

class Client::Impl {
 public:
  ~Impl() { (void)Close(); }

  // One call of the API in flight, from its start to its return: Close waits until none is left
  // before it frees anything, and refuses new ones from its start on.
  class Call {
   public:
    explicit Call(Impl& impl) : impl_(impl), status_(impl.Enter()) {}
    ~Call() {
      if (status_.ok()) impl_.Leave();
    }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    const Status& status() const { return status_; }

   private:
    Impl& impl_;
    Status status_;
  };

  // Finds the master among the conductors (MasterFollower), reads its directory, attaches to
  // every store rank. `connection_file`: "" when attached by address.
  Status Open(const ConnectionInfo& connection, const std::string& connection_file,
              const ClientOptions& options);
  // A call's master stopped answering (PeerFailure or Timeout): looks for the conductor that
  // took over, for up to options.failover_timeout, and moves every later call there. True when
  // the master is another one than when the call began (`seen`: generation() then), by this
  // follow or another thread's; false when the same master answered again (it was slow) or
  // following is off; an error naming every conductor tried when none answered.
  Result<bool> Follow(uint64_t seen);
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // A put of these keys (at most kMaxBatchKeys). Keys whose put-start went unanswered are put
  // again once the client moved to another master (nothing of them can be visible); keys whose
  // put-end went unanswered fail with PeerFailure naming the change (they may be stored).
  std::vector<Status> PutPart(std::span<const std::string> keys,
                              std::span<const std::span<const std::byte>> values,
                              const store::ReplicateConfig& config);
  // A remove of these keys: one in flight when the master changed fails naming the change.
  std::vector<Status> RemovePart(std::span<const std::string> keys);
  // Runs `read` (a get, exists or size: it changes nothing); when the master left it unanswered
  // and the client then moved to another master, runs it once more there.
  template <typename F>
  auto Reading(F&& read) -> decltype(read()) {
    const uint64_t seen = generation();
    const uint64_t unanswered = store::StoreClient::MasterUnansweredOnThisThread();
    auto result = read();
    if (store::StoreClient::MasterUnansweredOnThisThread() == unanswered || AnyOk(result)) {
      return result;
    }
    auto moved = Follow(seen);
    if (moved.ok() && *moved) return read();
    return result;
  }
  StoreInfo info_now() const {
    std::lock_guard<std::mutex> lock(info_mutex_);
    return info;
  }
  // Refuses new calls, waits for those in flight (each ends within its deadline), then frees.
  Status Close();
  store::ReplicateConfig Replication(const PutOptions& options) const;
  // Calls `f(first, count)` for each part of at most kMaxBatchKeys of `n` keys; once Close has
  // begun, calls `closed(first, count)` for the parts not started yet instead.
  template <typename F, typename G>
  void InParts(size_t n, F&& f, G&& closed) {
    for (size_t first = 0; first < n; first += store::kMaxBatchKeys) {
      const size_t count = std::min<size_t>(store::kMaxBatchKeys, n - first);
      if (closing()) {
        closed(first, count);
      } else {
        f(first, count);
      }
    }
  }
  bool closing() {
    std::lock_guard<std::mutex> lock(calls_mutex_);
    return closed_;
  }
  static Status ClosedDuringCall() {
    return InvalidArgument("the client was closed during the call");
  }

  ClientOptions options;
  StoreInfo info;  // guarded by info_mutex_ once Open returned
  std::unique_ptr<transport::Transport> transport;
  std::unique_ptr<transport::Rpc> rpc;
  std::unique_ptr<store::StoreClient> store;
  std::mutex regions_mutex;
  std::map<void*, transport::MemoryRegion> regions;  // RegisterBuffer, by address

 private:
  Status AttachTo(Rank rank, const std::vector<std::string>& addresses,
                  const std::vector<std::byte>& credential, bool* nothing_listens = nullptr);
  // A store rank that joined the job after Open (the master placed a replica there): asks the
  // master's directory for it, attaches and imports its segment (GrowingTopology's resolver).
  Result<store::StoreSegment> AttachJoined(Rank rank, Rank master,
                                           const std::vector<std::byte>& credential);
  Status Enter();
  void Leave();
  // Whether a read's result holds anything the master answered (then it did not fail it).
  static bool AnyOk(const Status& s) { return s.ok(); }
  template <typename T>
  static bool AnyOk(const Result<T>& r) {
    return r.ok();
  }
  template <typename T>
  static bool AnyOk(const std::vector<Result<T>>& rs) {
    return std::any_of(rs.begin(), rs.end(), [](const auto& r) { return r.ok(); });
  }

  // This process's number at `master` (the transport's own number where it keeps none).
  uint64_t AttachedAs(Rank master) const {
    auto* numbers = transport::AttachNumbersOf(*transport);
    return static_cast<uint64_t>((numbers ? numbers->AttachedAs(master) : transport->self()).value);
  }

  std::unique_ptr<MasterFollower> follower_;
  std::mutex follow_mutex_;              // one follow at a time
  std::atomic<uint64_t> generation_{0};  // +1 each time the client moves to another master
  mutable std::mutex info_mutex_;

  std::mutex calls_mutex_;
  std::condition_variable calls_done_;
  int calls_in_flight_ = 0;  // guarded by calls_mutex_
  bool closed_ = false;      // no new call starts (guarded by calls_mutex_)
  bool freed_ = false;       // the store, the Rpc and the transport are gone
};

}  // namespace mooncake::client
