// MasterService: serves a MetadataMaster over the Rpc (the conductor rank runs it). It decodes
// the StoreMsg requests, calls the master under one mutex, and encodes the answers; it never
// touches object bytes. Zombie puts (PutStart without PutEnd) are revoked by a timer thread that
// calls MetadataMaster::Tick every `tick_interval`, and lazily by the master on the next call
// that names the key.
//
// Threading: handlers run on the Rpc's dispatcher thread; the tick thread and WithMaster take the
// same mutex, so the master sees one caller at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "common/clock.h"
#include "store/master.h"
#include "store/net/journal_sender.h"
#include "store/net/messages.h"
#include "store/net/topology.h"
#include "transport/rpc.h"

namespace mooncake::store {

class StandbyTable;

struct MasterServiceConfig {
  MasterConfig master;
  Nanos tick_interval = std::chrono::milliseconds(100);  // 0: no timer thread (lazy only)
};

class MasterService {
 public:
  // `rpc`, `clock` and `sink` (may be null) must outlive the service.
  MasterService(MasterServiceConfig cfg, transport::Rpc& rpc, Clock& clock,
                EvictionSink* sink = nullptr);
  ~MasterService();
  MasterService(const MasterService&) = delete;
  MasterService& operator=(const MasterService&) = delete;

  // Registers every segment of `topology` with the master (AddSegment(rank, length)).
  Status AddSegments(const StoreTopology& topology);
  // A store rank joined the running job: its segment takes puts from the next call on (and
  // survives Reset). AlreadyExists when the rank has one.
  Status AddSegment(const StoreSegment& segment);
  // A drained store rank leaves (MetadataMaster::RemoveDrained); Reset forgets it too.
  Status RemoveDrainedSegment(Rank rank);
  // Forgets every object and in-flight put and starts over with the same segments (benchmarks
  // and tests between cases; the store ranks' bytes are simply overwritten later). The RPC counters
  // stay; the master's own restart.
  void Reset();
  // Replaces the master's eviction sink (null: evictions drop); also used after Reset.
  void SetEvictionSink(EvictionSink* sink);
  // Writes the tombstones a remove ordered (MetadataMaster::TakeTombstones) and returns one
  // status per order; called on the dispatcher thread without the master's lock, before the
  // remove is answered. Unset: removes of SSD-resident objects are answered at once (no tier).
  using TombstoneWriter =
      std::function<std::vector<Status>(const std::vector<TombstoneOrder>& orders)>;
  void SetTombstoneWriter(TombstoneWriter writer);
  // Registers the StoreMsg handlers and starts the tick thread. Call before peers may call
  // (before the bootstrap barrier).
  void Start();
  // Stops the tick thread. Handlers stay registered; stop the Rpc before destroying the service.
  void Stop();

  // Runs `f(master)` under the service's lock (tests, the conductor, the spill path). What `f`
  // changed goes to the journal (SetJournal), unacknowledged by anyone.
  template <typename F>
  auto WithMaster(F&& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    const JournalFlush flush{*this};
    return f(*master_);
  }
  // A standby follows this master (store/journal.h): from now on every committed change is
  // appended to `journal`, and the answer of a call that changed something waits until the
  // standby has it. Null: no journal. `journal` must outlive the service (or be unset first).
  void SetJournal(JournalSender* journal);
  // Replaces the master with one rebuilt from a standby's table (the standby took over):
  // its segments and committed objects, nothing in flight. The segments it names stay for Reset.
  Status Restore(const StandbyTable& table);
  // When the first request after Start (or Restore) was served (0: none yet), on the service's
  // steady clock: the takeover time's end.
  Nanos first_request_at() const { return Nanos(first_request_ns_.load()); }
  StatsResponse Stats();

 private:
  void Serve(StoreMsg type, std::span<const std::byte> request, transport::Responder responder);
  Result<std::vector<std::byte>> Handle(StoreMsg type, std::span<const std::byte> request);
  Result<std::vector<std::byte>> Remove(std::span<const std::byte> request);
  // The batched calls of the hot path, each into this thread's reused request and answer.
  Result<std::vector<std::byte>> PutStart(std::span<const std::byte> request);
  Result<std::vector<std::byte>> PutEnd(std::span<const std::byte> request);
  Result<std::vector<std::byte>> Get(std::span<const std::byte> request);
  void TickLoop();
  // Under mutex_: the master's changes into the journal; the sequence number an answer waits for
  // (0: none). Also leaves it for Serve (t_wait_seq).
  uint64_t JournalLocked();
  struct JournalFlush {
    MasterService& service;
    ~JournalFlush() { (void)service.JournalLocked(); }
  };

  MasterServiceConfig cfg_;
  transport::Rpc& rpc_;
  std::mutex mutex_;  // guards master_ and stats_
  Clock& clock_;
  EvictionSink* sink_;
  TombstoneWriter tombstone_writer_;  // guarded by mutex_
  std::optional<MetadataMaster> master_;
  StoreTopology segments_;  // for Reset
  StatsResponse stats_;
  SteadyClock wall_;                  // for the *_ns counters (the master's clock may be virtual)
  JournalSender* journal_ = nullptr;  // guarded by mutex_
  std::vector<JournalEntry> journal_scratch_;  // guarded by mutex_
  std::atomic<int64_t> first_request_ns_{0};

  std::mutex tick_mutex_;
  std::condition_variable tick_cv_;
  bool stopping_ = false;
  std::thread ticker_;
};

}  // namespace mooncake::store
