// The transport: one narrow interface for both planes of a rank (DESIGN.md "Three planes").
//
//  * Data plane: register memory, export its remote descriptor, import peers' descriptors, and
//    submit batches of one-sided READ/WRITE requests against peers' registered memory. A batch is
//    polled or waited on with a deadline; "in progress" is a state, not an error; a failed request
//    names its peer and the reason.
//  * Control plane: small messages to a peer, delivered to one handler per rank. Rpc (rpc.h)
//    builds typed request/response calls with deadlines on top of it.
//
// Backends (chosen in one factory, factory/transport_factory.h): `ucx` for real ranks and
// `loopback` for several ranks inside one process (unit tests, single-process runs).
//
// Threading: every method may be called from any thread. Message handlers run on a transport
// thread and must not block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"

namespace mooncake::transport {

enum class MemoryType : uint8_t { kHost = 0, kCuda = 1 };

// A local registration. `id` is unique within the owning Transport.
struct MemoryRegion {
  uint64_t id = 0;
  void* addr = nullptr;
  size_t length = 0;
  MemoryType type = MemoryType::kHost;
};

// What a peer needs to address a registered region: its address range and the backend's packed
// remote key. Serialisable with Encode/Decode (bounds-checked) for the bootstrap exchange.
struct RemoteDescriptor {
  uint64_t addr = 0;
  uint64_t length = 0;
  MemoryType type = MemoryType::kHost;
  std::vector<std::byte> packed_key;

  std::vector<std::byte> Encode() const;
  static Result<RemoteDescriptor> Decode(std::span<const std::byte> bytes);
};

enum class OpKind : uint8_t { kRead = 0, kWrite = 1 };

// READ copies peer memory [remote_addr, +length) into `local`; WRITE copies `local` to the peer.
// `local` must stay valid (and, for ucx, inside a registered region when the backend needs it)
// until the batch completes.
struct TransferRequest {
  OpKind op = OpKind::kRead;
  void* local = nullptr;
  Rank peer;
  uint64_t remote_addr = 0;
  size_t length = 0;
  // A hint for WRITEs: nothing will read the destination soon on this core (a store rank's
  // segment). Backends that copy with the CPU (ucx over a mapped shared-memory segment, loopback)
  // then use streaming stores, which skip the read-for-ownership of every destination line
  // (common/streaming_copy.h). Ignored for reads and by backends that do not copy.
  bool bypass_cache = false;
};

enum class BatchState : uint8_t { kInProgress, kCompleted, kFailed };

// A submitted batch. Owned by the caller; destroying it while requests are still in flight is
// allowed (the transport keeps what the hardware still references alive) but the local buffers
// must then stay valid until the transport is closed.
class TransferBatch {
 public:
  virtual ~TransferBatch() = default;
  virtual BatchState Poll() = 0;
  // Waits until every request finished or `timeout` passed. Returns OK, the first failure, or
  // Timeout naming the peers still pending.
  virtual Status Wait(Nanos timeout) = 0;
  // Per-request status, in submission order (kOk, an error, or Busy while in progress).
  virtual std::vector<Status> RequestStatus() const = 0;
  virtual size_t size() const = 0;
};

// Called for every control message that arrives: sender and payload (valid during the call).
using MessageHandler = std::function<void(Rank from, std::span<const std::byte> payload)>;

// Processes outside the job (DESIGN.md "Attaching from outside the job"). One rank of the job
// listens on a TCP socket address; a process the launcher did not start (a store client)
// attaches to it there, presenting a credential that the listener checks before anything the
// process sends is delivered. An attached peer is numbered from world_size() up (above the join
// slots where the backend has them, join_slots.h), in arrival order and never reused: the
// message handler sees its messages under that rank, SendMessage answers it, and the
// peer-failure handler hears when it detached or its connection failed.
struct ListenConfig {
  std::string address = "0.0.0.0";  // IPv4 address to bind; 0.0.0.0 binds every interface
  uint16_t port = 0;                // 0: the kernel picks a free port
};
// Admits (true) or refuses an attaching process by its credential. Runs on a transport thread;
// must not block.
using AttachCheck = std::function<bool(std::span<const std::byte> credential)>;
// Called when the backend itself sees a peer fail (a tcp or rdma endpoint reports the peer
// gone), with the reason. Runs on a transport thread; must not block.
using PeerFailureHandler = std::function<void(Rank peer, const std::string& why)>;

class Transport {
 public:
  virtual ~Transport() = default;

  virtual Rank self() const = 0;
  virtual int world_size() const = 0;
  virtual std::string backend_name() const = 0;

  // Bootstrap: this rank's address blob, and connecting to every rank given all blobs (index =
  // rank).
  virtual std::vector<std::byte> LocalAddress() const = 0;
  virtual Status ConnectAll(const std::vector<std::vector<std::byte>>& addresses) = 0;

  virtual Result<MemoryRegion> RegisterMemory(void* addr, size_t length, MemoryType type) = 0;
  virtual Status UnregisterMemory(const MemoryRegion& region) = 0;
  // Allocates `length` bytes owned by the transport and registers them (UnregisterMemory frees
  // them). Backends may place such memory where peers reach it fastest: UCX allocates it as
  // shared memory that a peer on the same host maps, so READ/WRITE become one memcpy.
  // Backends without such memory return NotSupported; callers then RegisterMemory their own.
  virtual Result<MemoryRegion> AllocateMemory(size_t length, MemoryType type) {
    (void)length;
    (void)type;
    return NotSupported(backend_name() + " does not allocate memory");
  }
  virtual Result<RemoteDescriptor> Export(const MemoryRegion& region) = 0;
  virtual Status Import(Rank owner, const RemoteDescriptor& descriptor) = 0;

  virtual Result<std::unique_ptr<TransferBatch>> Submit(
      std::span<const TransferRequest> requests) = 0;

  // One handler per rank; set before ConnectAll. No ordering is promised between messages.
  virtual void SetMessageHandler(MessageHandler handler) = 0;
  // Queues a copy of `payload` for `peer`; returns once it is queued (or an error for a dead peer).
  virtual Status SendMessage(Rank peer, std::span<const std::byte> payload) = 0;

  // Drives the backend's progress engine once from the calling thread; true when something
  // happened. Waiters call it so that a blocked caller does the work instead of waiting for the
  // transport's own thread. Backends without a progress engine return false.
  virtual bool Progress() = 0;
  // True when a waiting caller that calls Progress() itself gets its completions sooner than by
  // sleeping (the backend has a progress engine callers may drive). Rpc::Call spins only then.
  virtual bool CallerProgressHelps() const { return false; }
  // A waiter announces that it drives Progress() itself until it is done (see
  // CallerProgressScope). The backend's own progress thread then stays off the progress engine:
  // on a rank pinned to one core, two threads taking turns at the engine's lock time-slice the
  // core, and the one spinning for the lock burns the slice the holder needs.
  virtual void BeginCallerProgress() {}
  virtual void EndCallerProgress() {}

  // Where the peer's [remote_addr, +length) is mapped into this process (shared memory on one
  // node), or null: another node, a network-only path, a peer known to have failed (over
  // shared memory a dead peer is not detected here), a range outside the peer's imported
  // regions, or a backend that does not map. A caller may then move the bytes itself with the
  // CPU, as Submit would, and fuse its own work with the copy (the store client hashes each
  // chunk while it is in L1). Valid until the transport closes.
  virtual std::byte* MappedAddress(Rank peer, uint64_t remote_addr, size_t length) {
    (void)peer;
    (void)remote_addr;
    (void)length;
    return nullptr;
  }

  // Who hears of peers the backend saw fail (the conductor's failure detector: a reset tcp
  // connection declares the rank dead at once, without waiting for missed heartbeats). Backends
  // that never detect a failure themselves (shared memory, loopback) never call it.
  virtual void SetPeerFailureHandler(PeerFailureHandler handler) { (void)handler; }

  // The job's membership declared `peer` dead (a missed heartbeat: over shared memory a dead or
  // stopped peer is never reported by the backend itself). From now on every transfer to it
  // fails fast with PeerFailure naming it, and waits on batches that still have requests to it
  // return PeerFailure instead of running into their deadline. Messages still go out (Rpc
  // refuses calls to a dead rank itself, and tells a fenced rank that wakes up so).
  // Keeps `keepalive` (memory that requests still in flight may read or write: the source of a
  // batch that failed its deadline to a stalled peer, and the batch) until Close. UCX cannot
  // cancel a send in progress; freeing its buffer earlier lets the progress thread read freed
  // memory when the peer wakes (found by AddressSanitizer in mpi_fault_store_stop). Backends
  // that finish every request inside Wait keep nothing.
  virtual void RetainUntilClosed(std::shared_ptr<void> keepalive) { (void)keepalive; }

  virtual void MarkPeerDead(Rank peer, const std::string& why) {
    (void)peer;
    (void)why;
  }
  // True once MarkPeerDead(peer) was called or the backend saw the peer fail.
  virtual bool PeerDead(Rank peer) const {
    (void)peer;
    return false;
  }

  // Listener side of attaching (see ListenConfig): starts accepting processes outside the job;
  // `check` decides on each one's credential. Returns the bound port. Call once, after
  // ConnectAll. Backends that cannot accept outside processes return NotSupported.
  virtual Result<uint16_t> Listen(const ListenConfig& config, AttachCheck check) {
    (void)config;
    (void)check;
    return NotSupported(backend_name() + " does not accept processes outside the job");
  }
  // Attached peers connected now (the listener's count, for logs).
  virtual size_t attached_peers() const { return 0; }
  // Data-path messages dropped because they did not come on the endpoint of the rank they named
  // (a process outside the job forging writes, reads or acknowledgements).
  virtual uint64_t refused_data_messages() const { return 0; }
  // The same, by the endpoint each came on (the sender as UCX knows it, never the number the
  // message claims): "<r>", the endpoint of job rank r (a rank that named another);
  // "attached:<ip:port>", a process attached through this rank's listener, by its connection's
  // address ("unadmitted:<ip:port>" before it presented the job token); "unknown", any other
  // endpoint (a process that connected straight to the worker's address: UCX does not say from
  // where). At most kMaxRefusalSenders names; further senders are counted under "other".
  static constexpr size_t kMaxRefusalSenders = 64;
  virtual std::map<std::string, uint64_t> refused_data_messages_by_peer() const { return {}; }

  // Attaching side, on a transport made for a process outside the job (its self() is unknown
  // until then): connects to the listener at host:port, which is rank `listener` of the job,
  // and presents `credential`. On success self() is the number the listener gave this process.
  // PermissionDenied when the listener refused the credential; PeerFailure when nothing listens
  // there; Timeout when no answer came within `timeout`; InvalidArgument when the listener's
  // job has another number of ranks than this transport was made for. `*job_size` (if given)
  // receives the listener's number of ranks whenever it answered, so a process that did not
  // know it can make a transport of the right size and attach again.
  virtual Status Attach(Rank listener, const std::string& host, uint16_t port,
                        std::span<const std::byte> credential, Nanos timeout,
                        int* job_size = nullptr) {
    (void)listener;
    (void)host;
    (void)port;
    (void)credential;
    (void)timeout;
    (void)job_size;
    return NotSupported(backend_name() + " cannot attach to a job");
  }
  // Connects to one rank of the job by that rank's LocalAddress() (a process outside the job
  // connects only to the ranks it moves bytes with, after Attach).
  virtual Status Connect(Rank peer, std::span<const std::byte> address) {
    (void)peer;
    (void)address;
    return NotSupported(backend_name() + " cannot connect to a single rank");
  }

  // The network devices this backend was limited to ("lo", "mlx5_0:1,eth0": UCX_NET_DEVICES or
  // transport.devices); empty when it may use every device.
  virtual std::string NetDevices() const { return ""; }

  // Human-readable description of how bytes reach `peer` (for ucx: the UCX transports in use).
  virtual std::string DescribePath(Rank peer) const = 0;

  // Announces an orderly shutdown: from now on a peer that disappears is not reported as a
  // failure. Call on every rank after a barrier, then barrier again before Close.
  virtual void BeginShutdown() = 0;

  // Flushes and closes endpoints; waits at most `timeout`. No method may be called afterwards.
  virtual Status Close(Nanos timeout) = 0;
};

// Brackets a loop in which the calling thread drives `transport->Progress()` (null: no-op).
class CallerProgressScope {
 public:
  explicit CallerProgressScope(Transport* transport) : transport_(transport) {
    if (transport_) transport_->BeginCallerProgress();
  }
  ~CallerProgressScope() { Release(); }
  // Ends the scope early (the caller stops driving progress, e.g. to sleep).
  void Release() {
    if (transport_) transport_->EndCallerProgress();
    transport_ = nullptr;
  }
  CallerProgressScope(const CallerProgressScope&) = delete;
  CallerProgressScope& operator=(const CallerProgressScope&) = delete;

 private:
  Transport* transport_;
};

}  // namespace mooncake::transport
