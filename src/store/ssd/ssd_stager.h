// SsdStager: a store rank's side of remote reads of SSD-resident blocks (kSsdStage).
//
// A client asks for keys; the stager reserves room for each block in its staging region (memory
// registered with the transport and exported to the client in the answer), several reader
// threads read the blocks from the SsdTier into it at once (checksum-verified by the tier,
// unless the client said it verifies them itself), and the answer says where each block sits. The
// client then READs the bytes one-sided (over shared memory: one memcpy from the mapped region) and
// verifies them against the master's checksum, then releases them (kSsdRelease). Nothing of a block
// travels inside an RPC reply, and the RPC dispatcher never waits on the disk.
//
// Staging room is leased: released by the client, or reclaimed `lease` after the answer (a
// client that died or gave up). A client reading after its lease may see other bytes; its
// checksum check catches that. Admission is FIFO: a request waits up to `admission_wait` for
// room, then its remaining blocks are answered Busy.
//
// Threading: Submit and Release may be called from any thread (the Rpc's inline handlers) and
// never block on the disk. One admission thread and `reader_threads` readers run inside.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "store/segment_allocator.h"
#include "store/ssd_tier.h"
#include "transport/host_buffer.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::store {

struct SsdStagerConfig {
  uint64_t staging_bytes = 64ull << 20;  // registered staging region (at least one 32 MiB read)
  int reader_threads = 4;                // SSD reads in flight at once
  Nanos lease = std::chrono::seconds(10);
  Nanos admission_wait = std::chrono::seconds(5);
};

struct SsdStagerStats {
  uint64_t requests = 0;
  uint64_t blocks_staged = 0;   // read into staging and answered OK
  uint64_t read_failures = 0;   // NotFound, Corrupt, IoError from the tier
  uint64_t busy = 0;            // no staging room within admission_wait
  uint64_t leases_expired = 0;  // reclaimed without a release
};

class SsdStager {
 public:
  // Allocates the staging region through `transport` (AllocateMemory, else registered heap) and
  // starts the threads. `transport` and `tier` must outlive the stager.
  static Result<std::unique_ptr<SsdStager>> Create(transport::Transport& transport, SsdTier& tier,
                                                   SsdStagerConfig cfg);
  ~SsdStager();  // Stop()
  SsdStager(const SsdStager&) = delete;
  SsdStager& operator=(const SsdStager&) = delete;

  // Queues a request; `responder` is answered (SsdStageResponse) from a reader thread. With
  // `client_verifies` the tier's own checksum check is skipped (the client checks each block
  // against the same checksum); otherwise a block that fails it is answered Corrupt.
  // `versions` holds one version per key: only that version of each block is staged.
  void Submit(std::vector<std::string> keys, std::vector<uint64_t> versions, bool client_verifies,
              transport::Responder responder);
  // The client read ticket's blocks: their room is free again. Unknown tickets are ignored.
  void Release(uint64_t ticket);
  // Answers what is queued with Busy, joins the threads, unregisters the region. Idempotent;
  // must run before the transport closes (it owns AllocateMemory'd regions).
  void Stop();
  SsdStagerStats Stats() const;

 private:
  struct Request {
    std::vector<std::string> keys;
    std::vector<uint64_t> versions;  // one per key
    transport::Responder responder;
    bool client_verifies = false;
    std::vector<uint64_t> size;    // per key: the tier's size (0: not on SSD), then bytes read
    std::vector<Allocation> room;  // per key (size 0: not staged)
    std::vector<Status> status;    // per key; a run's keys are written by its reader only
    std::vector<size_t> staged;    // the keys with room, in order (set by Dispatch)
    size_t runs_left = 0;          // guarded by the stager's mutex
  };
  // Keys staged[first, last) of a request, read back to back by one reader.
  struct Read {
    std::shared_ptr<Request> request;
    size_t first;
    size_t last;
  };
  struct Lease {
    std::vector<Allocation> room;
    Nanos until;
  };

  SsdStager(transport::Transport& transport, SsdTier& tier, SsdStagerConfig cfg);
  Status AllocateRegion();
  void AdmitLoop();
  void ReadLoop();
  // Room for every key of `r` if all fit now (else none taken). Holds mu_.
  bool TryAdmit(Request& r);
  // Admission thread: room for every key of `r` (waiting for releases, up to admission_wait).
  void Admit(Request& r, std::unique_lock<std::mutex>& lock);
  // Queues the reads of an admitted request (or answers it when nothing was staged).
  void Dispatch(const std::shared_ptr<Request>& r, std::unique_lock<std::mutex>& lock);
  // Frees expired leases (true when it freed any) and lowers *next_expiry to the earliest one
  // left. Holds mu_.
  bool ReclaimExpired(Nanos now, Nanos* next_expiry);
  // The last read of `r` finished: keep its room under a lease and answer. Holds no lock.
  void Answer(const std::shared_ptr<Request>& r);

  transport::Transport& transport_;
  SsdTier& tier_;
  SsdStagerConfig cfg_;
  SteadyClock clock_;
  transport::MemoryRegion region_;
  transport::HostBuffer buffer_;       // region_'s memory
  std::vector<std::byte> descriptor_;  // the region's RemoteDescriptor, encoded

  mutable std::mutex mu_;
  std::condition_variable admit_cv_;  // requests queued, room freed, stopping
  std::condition_variable read_cv_;   // reads queued, stopping
  std::deque<std::shared_ptr<Request>> requests_;
  std::deque<Read> reads_;
  SegmentAllocator room_;
  std::map<uint64_t, Lease> leases_;
  uint64_t next_ticket_ = 1;
  bool stopping_ = false;      // no more admissions
  bool readers_stop_ = false;  // set once the admitter is gone: readers drain and leave
  SsdStagerStats stats_;
  std::thread admitter_;
  std::vector<std::thread> readers_;
};

}  // namespace mooncake::store
