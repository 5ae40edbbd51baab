// Internal declaration of the UCX transport, shared by ucx_transport.cc (setup, memory,
// messages) and ucx_data_path.cc (READ/WRITE). Not included outside this folder.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "transport/batch_tracker.h"
#include "transport/region_table.h"
#include "transport/ucx/ucx_transport.h"

namespace mooncake::transport {

// Active-message ids. Headers are fixed-size structs, checked for length before use.
enum AmId : unsigned {
  kAmControl = 1,   // header: ControlHeader; payload: an Rpc frame
  kAmWrite = 2,     // header: DataHeader; payload: bytes to place at remote_addr
  kAmWriteAck = 3,  // header: AckHeader
  kAmReadReq = 4,   // header: DataHeader; no payload
  kAmReadResp = 5,  // header: AckHeader; payload: the bytes read
};

struct ControlHeader {
  int32_t src_rank;
};
struct DataHeader {
  uint64_t token;
  uint64_t remote_addr;
  uint64_t length;
  int32_t src_rank;
  int32_t pad;
};
struct AckHeader {
  uint64_t token;
  int32_t status;  // ucs_status_t of the target's handling
  int32_t pad;
};

// Owners of the UCX handles with a plain destructor. Endpoints are not among them: they are
// closed with a flush that needs a deadline and the progress engine (Close), not a destructor.
struct UcpContextDeleter {
  void operator()(ucp_context_h context) const { ucp_cleanup(context); }
};
struct UcpWorkerDeleter {
  void operator()(ucp_worker_h worker) const { ucp_worker_destroy(worker); }
};
using UcpContext = std::unique_ptr<std::remove_pointer_t<ucp_context_h>, UcpContextDeleter>;
using UcpWorker = std::unique_ptr<std::remove_pointer_t<ucp_worker_h>, UcpWorkerDeleter>;
// An endpoint: force-closed without waiting when its owner goes (Close closes them first, with
// a deadline, while the progress thread still runs; this is the owner of last resort).
struct UcpEndpointDeleter {
  void operator()(ucp_ep_h ep) const {
    ucp_request_param_t rp{};
    rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &rp);
    if (req != nullptr && !UCS_PTR_IS_ERR(req)) ucp_request_free(req);
  }
};
using UcpEndpoint = std::unique_ptr<std::remove_pointer_t<ucp_ep_h>, UcpEndpointDeleter>;
// A registration: unmapped through the context it was mapped with (which outlives it).
struct UcpMemDeleter {
  ucp_context_h context = nullptr;
  void operator()(ucp_mem_h memh) const { ucp_mem_unmap(context, memh); }
};
using UcpMem = std::unique_ptr<std::remove_pointer_t<ucp_mem_h>, UcpMemDeleter>;

struct RkeyHolder {
  ucp_rkey_h rkey = nullptr;
  // Where the peer's region [remote_base, +length) is mapped in this process, when UCX mapped
  // it (ucp_rkey_ptr: a posix/sysv shared-memory segment on this host); else null.
  std::byte* mapped = nullptr;
  uint64_t remote_base = 0;
  ~RkeyHolder() {
    if (rkey) ucp_rkey_destroy(rkey);
  }
};

// One posted slice (or flush) waiting for completion.
struct SliceOp {
  std::shared_ptr<BatchTracker> tracker;
  size_t index = 0;             // the request this slice belongs to
  std::vector<size_t> indices;  // a flush: the requests it completes (then `index` is unused)
  int32_t peer = -1;
  void* local = nullptr;  // AM read: where the response lands
  size_t length = 0;

  // Completes one slice of each request this op covers.
  void Complete(const Status& s) const {
    if (indices.empty()) {
      tracker->CompleteSlice(index, s);
    } else {
      for (size_t i : indices) tracker->CompleteSlice(i, s);
    }
  }
};

class UcxTransport;
struct PeerErrorArg {
  UcxTransport* transport;
  int32_t peer;
};

class UcxTransport final : public Transport {
 public:
  UcxTransport(const UcxConfig& config, Rank self, int world_size);
  ~UcxTransport() override;
  Status Init();

  Rank self() const override { return self_; }
  int world_size() const override { return world_size_; }
  std::string backend_name() const override { return "ucx"; }
  std::vector<std::byte> LocalAddress() const override { return local_address_; }
  Status ConnectAll(const std::vector<std::vector<std::byte>>& addresses) override;

  Result<MemoryRegion> RegisterMemory(void* addr, size_t length, MemoryType type) override;
  Status UnregisterMemory(const MemoryRegion& region) override;
  Result<MemoryRegion> AllocateMemory(size_t length, MemoryType type) override;
  Result<RemoteDescriptor> Export(const MemoryRegion& region) override;
  Status Import(Rank owner, const RemoteDescriptor& descriptor) override;

  Result<std::unique_ptr<TransferBatch>> Submit(std::span<const TransferRequest> requests) override;
  std::byte* MappedAddress(Rank peer, uint64_t remote_addr, size_t length) override;

  void SetMessageHandler(MessageHandler handler) override;
  Status SendMessage(Rank peer, std::span<const std::byte> payload) override;
  bool Progress() override;
  bool CallerProgressHelps() const override { return true; }
  void BeginCallerProgress() override { callers_waiting_.fetch_add(1, std::memory_order_relaxed); }
  void EndCallerProgress() override { callers_waiting_.fetch_sub(1, std::memory_order_relaxed); }
  std::string DescribePath(Rank peer) const override;
  void MarkPeerDead(Rank peer, const std::string& why) override;
  void RetainUntilClosed(std::shared_ptr<void> keepalive) override {
    std::lock_guard<std::mutex> lock(retained_mutex_);
    retained_.push_back(std::move(keepalive));
  }
  void SetPeerFailureHandler(PeerFailureHandler handler) override;
  bool PeerDead(Rank peer) const override {
    return peer.value >= 0 && peer.value < world_size_ && TransfersRefused(peer.value);
  }
  void BeginShutdown() override { shutting_down_ = true; }
  Status Close(Nanos timeout) override;

  // Callbacks from UCX (static trampolines forward here).
  ucs_status_t OnControl(const void* header, size_t header_length, void* data, size_t length,
                         const ucp_am_recv_param_t* param);
  ucs_status_t OnWrite(const void* header, size_t header_length, void* data, size_t length,
                       const ucp_am_recv_param_t* param);
  ucs_status_t OnAck(unsigned id, const void* header, size_t header_length, void* data,
                     size_t length, const ucp_am_recv_param_t* param);
  ucs_status_t OnReadReq(const void* header, size_t header_length);
  void OnPeerError(int32_t peer, ucs_status_t status);
  // Completes every active-message slice still waiting on it.
  void FailPeer(int32_t peer, const Status& status);
  void CompleteToken(uint64_t token, const Status& status);

 private:
  Status CreateContext();
  Status CreateWorker();
  Status RegisterAmHandlers();
  void ProgressLoop();
  Status PostRma(const std::shared_ptr<BatchTracker>& tracker, size_t index,
                 std::vector<std::vector<size_t>>* writes_by_peer);
  Status PostAm(const std::shared_ptr<BatchTracker>& tracker, size_t index);
  void PostFlush(const std::shared_ptr<BatchTracker>& tracker, int32_t peer,
                 std::vector<size_t> indices);
  uint64_t RegisterToken(std::unique_ptr<SliceOp> op);
  void SendAck(int32_t peer, unsigned id, uint64_t token, ucs_status_t status, const void* data,
               size_t length);
  bool UsesAm(int32_t peer) const;
  // The imported region of `peer` containing [addr, +length), or null. Lock-free on a repeat
  // hit (a per-thread cache checked against imports_version_); valid until Close.
  const RkeyHolder* FindImported(int32_t peer, uint64_t addr, uint64_t length);
  std::string PeerName(int32_t peer) const { return "rank " + std::to_string(peer); }

  UcxConfig config_;
  Rank self_;
  int world_size_;
  // RetainUntilClosed: released in Close once the progress thread stopped; declared before the
  // worker so that, without Close, it is destroyed after it too.
  std::mutex retained_mutex_;
  std::vector<std::shared_ptr<void>> retained_;
  UcpContext context_;  // declared before worker_: destroyed after it
  UcpWorker worker_;
  std::vector<std::byte> local_address_;
  std::vector<UcpEndpoint> eps_;
  std::vector<std::unique_ptr<PeerErrorArg>> error_args_;  // outlive the endpoints
  std::vector<char> use_am_;                               // per peer: AM data path (1) or RMA (0)
  std::vector<std::string> paths_;  // per peer: UCX transports of the endpoint's lanes
  std::unique_ptr<std::atomic<bool>[]> peer_failed_;  // UCX reported the endpoint failed
  // MarkPeerDead: transfers are refused, messages still go out (a fenced rank that wakes up is
  // told so in a reply).
  std::unique_ptr<std::atomic<bool>[]> peer_declared_dead_;
  bool TransfersRefused(int32_t peer) const {
    return peer_failed_[peer] || peer_declared_dead_[peer];
  }

  std::mutex regions_mutex_;
  std::unordered_map<uint64_t, std::pair<MemoryRegion, UcpMem>> regions_;  // by id
  uint64_t next_region_id_ = 1;
  RegionTable<uint64_t> local_ranges_;  // base -> region id (for AM-path targets)
  std::vector<std::unique_ptr<RegionTable<std::shared_ptr<RkeyHolder>>>> imported_;  // per peer
  // Holders a re-import replaced: kept until Close, so a pointer FindImported handed out (or a
  // thread's cached one) never dangles. Guarded by regions_mutex_.
  std::vector<std::shared_ptr<RkeyHolder>> retired_holders_;
  std::atomic<uint64_t> imports_version_{0};  // bumped by every Import (invalidates caches)
  const uint64_t instance_id_;                // unique per transport in this process

  std::mutex tokens_mutex_;
  uint64_t next_token_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<SliceOp>> tokens_;

  std::mutex handler_mutex_;
  std::shared_ptr<MessageHandler> handler_;
  std::shared_ptr<PeerFailureHandler> failure_handler_;  // guarded by handler_mutex_

  // Callers that drive progress themselves (Waiters). While they do, the progress
  // thread stands aside: on a rank pinned to one core the two would otherwise time-slice the
  // core and contend for the worker lock, adding scheduler quanta to every completion.
  std::atomic<uint64_t> caller_progress_calls_{0};  // bumped by every Progress() call
  std::atomic<int> callers_posting_{0};  // threads inside Submit (posting may copy bytes inline)
  std::atomic<int> callers_waiting_{0};  // threads in a CallerProgressScope
  int efd_ = -1;  // the worker's event fd (UCP_FEATURE_WAKEUP), -1 when UCX has none
  std::atomic<bool> running_{false};
  std::atomic<bool> closing_{false};
  std::atomic<bool> shutting_down_{false};
  std::thread progress_thread_;
};

}  // namespace mooncake::transport
