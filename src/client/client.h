// The store's client for processes outside the job (DESIGN.md "Attaching from outside the job",
// docs/CLIENT.md): an inference engine's KV connector, a Python script, a tool. It attaches to a
// store service job (`mpirun -np N mooncake --job.mode store`) with the job's connection file,
// and then works as a rank of the job does: metadata goes to the job's master, bytes move
// one-sided between this process's memory and the store ranks' DRAM over UCX (shared memory on
// the same host, tcp or RDMA otherwise), and every object is verified by its checksum on read.
//
// Installed as <prefix>/include/mooncake/client/client.h with common/status.h beside it; link
// `mooncake::client` (find_package(mooncake)). The C API is mooncake_client.h.
//
// Semantics are the store's (docs/STORE.md): objects are immutable (a second put of a key is
// AlreadyExists until it is removed); a put is visible only once all its replicas are written
// and verified; a process that dies mid-put leaves nothing visible (the master revokes the put
// after its timeout and frees the space). Every call has a deadline (ClientOptions::timeout): a
// store that died or cannot be reached fails the call with a Status that names it, never a hang.
//
// A master that changes (a store job with a standby conductor, docs/FAULTS.md): a call whose
// master stops answering looks for the conductor that took over (the connection file lists
// every conductor; the new one rewrites it) for up to ClientOptions::failover_timeout, moves
// there, and every later call goes there. The call itself is retried there when that is safe:
// gets, exists and sizes (they change nothing), and a put whose put-start went unanswered
// (nothing of it could become visible: the new master never saw it). A put whose put-end went
// unanswered may or may not be stored: it fails with PeerFailure naming the master change and is
// not put again (exists tells); a remove in flight fails the same way. docs/CLIENT.md, "When the
// master changes".
//
// Zero copy: PutFrom / GetInto (and their batch forms) move bytes straight from / into the
// caller's memory; registering that memory first (RegisterBuffer) lets RDMA use it directly.
//
// Threading: a Client may be used by several threads at once, Close included: Close refuses new
// calls, waits for those in flight (each ends within about two of its deadlines; a batch stops
// between its parts of 4096 keys) and frees only then. A Close that waits longer returns Busy
// and frees nothing (close again). The destructor closes too; destroying a Client while another
// thread may still enter a call is the caller's bug, as for any C++ object.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace mooncake::client {

struct ClientOptions {
  std::chrono::nanoseconds timeout = std::chrono::seconds(10);          // of every call
  std::chrono::nanoseconds connect_timeout = std::chrono::seconds(10);  // of each attach
  bool verify_checksum = true;  // verify every object read (the store's XXH3 checksum)
  int copy_threads = 1;         // threads that copy one large (>= 4 MiB) call on shared memory
  // UCX transports this process may use: auto | shm | tcp | rdma | a raw UCX_TLS list.
  std::string transport_tls = "auto";
  // How long a call whose master stopped answering looks for the conductor that took over
  // before it fails (on top of its own timeout); 0: never looks (the call fails as it came).
  // Longer than the store job's cluster.failure_timeout (10 s in a store job), which a takeover
  // waits out first.
  std::chrono::nanoseconds failover_timeout = std::chrono::seconds(30);
};

// How a put is replicated and protected (Mooncake Store's ReplicateConfig).
struct PutOptions {
  uint32_t replicas = 0;             // on distinct store ranks; 0: the job's store.replicas
  bool soft_pin = false;             // evicted only after every unpinned object
  bool hard_pin = false;             // never evicted (Remove still works)
  std::vector<int> preferred_ranks;  // store ranks tried first, in order
};

// What the connected store is (from its directory).
struct StoreInfo {
  int world_size = 0;
  int master_rank = 0;
  std::vector<int> store_ranks;
  uint32_t default_replicas = 1;
  bool ssd = false;
  // This process's number at its master now (>= world_size): distinct for every process attached
  // to that master, and never one that another conductor of the job gives out.
  uint64_t attached_as = 0;
  uint64_t master_changes = 0;  // times this client moved to a conductor that took over
};

class Client {
 public:
  // Attaches with a connection file (<run folder>/connect.json of the store job).
  static Result<std::unique_ptr<Client>> Connect(const std::string& connection_file,
                                                 const ClientOptions& options = {});
  // Attaches with the master's "host:port" and the job token (32 hex digits) instead.
  static Result<std::unique_ptr<Client>> ConnectTo(const std::string& address,
                                                   const std::string& token,
                                                   const ClientOptions& options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Status Put(const std::string& key, std::span<const std::byte> value,
             const PutOptions& options = {});
  // The whole object, in a new buffer.
  Result<std::vector<std::byte>> Get(const std::string& key);
  // Zero copy from / into the caller's memory. GetInto returns the object's size; `out` must
  // hold it (InvalidArgument naming the size otherwise).
  Status PutFrom(const std::string& key, const void* data, size_t size,
                 const PutOptions& options = {});
  Result<size_t> GetInto(const std::string& key, void* out, size_t capacity);

  // Batch forms: results per key, in order. Batches of any size (sent in parts of 4096 keys).
  std::vector<Status> BatchPut(std::span<const std::string> keys,
                               std::span<const std::span<const std::byte>> values,
                               const PutOptions& options = {});
  std::vector<Result<std::vector<std::byte>>> BatchGet(std::span<const std::string> keys);
  std::vector<Result<size_t>> BatchGetInto(std::span<const std::string> keys,
                                           std::span<const std::span<std::byte>> outs);

  // OK when the object is visible, NotFound when not.
  Status Exists(const std::string& key);
  // One byte per key: 1 visible, 0 not. An error when the call itself failed.
  Result<std::vector<uint8_t>> BatchExists(std::span<const std::string> keys);
  Status Remove(const std::string& key);
  std::vector<Status> BatchRemove(std::span<const std::string> keys);
  Result<uint64_t> GetSize(const std::string& key);

  // Registers [addr, +size) with the transport for zero-copy transfers (RDMA reads and writes
  // it directly); Unregister takes the same address. Optional on shared memory and tcp.
  // InvalidArgument when size is 0 or the range is not mapped memory of this process (checked
  // page by page with msync before anything is registered).
  Status RegisterBuffer(void* addr, size_t size);
  Status UnregisterBuffer(void* addr);
  // OK when [addr, +size) lies inside one registered buffer, InvalidArgument naming the range
  // otherwise. What bindings that take raw integer addresses check before they use one.
  Status CheckRegistered(const void* addr, size_t size);

  // A copy: master_rank, attached_as and master_changes change when the master does.
  StoreInfo info() const;
  // Detaches from the store once the calls in flight have returned (Busy, nothing freed, when
  // some are still running after 2 x timeout + failover_timeout + 5 s); every later call fails with
  // InvalidArgument "the client is closed". Idempotent; the destructor calls it.
  Status Close();

  class Impl;

 private:
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mooncake::client
