// Internal declaration of the UCX transport, shared by ucx_transport.cc (setup, endpoints,
// messages), ucx_context.cc (the UCX context and worker), ucx_memory.cc (regions, keys),
// ucx_attach.cc and ucx_data_path.cc (READ/WRITE). Not included outside this folder.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "common/secret.h"
#include "transport/attach_numbers.h"
#include "transport/batch_tracker.h"
#include "transport/join_slots.h"
#include "transport/region_table.h"
#include "transport/ucx/ucx_transport.h"

namespace mooncake::transport {

// An error of UCX's `what` (a ucp_* call), kInternal, with UCX's text for `status`.
Status UcxError(const std::string& what, ucs_status_t status);

// Active-message ids. Headers are fixed-size structs, checked for length before use.
enum AmId : unsigned {
  kAmControl = 1,      // header: ControlHeader; payload: an Rpc frame
  kAmWrite = 2,        // header: DataHeader; payload: bytes to place at remote_addr
  kAmWriteAck = 3,     // header: AckHeader
  kAmReadReq = 4,      // header: DataHeader; no payload
  kAmReadResp = 5,     // header: AckHeader; payload: the bytes read
  kAmAttach = 6,       // header: AttachHeader; payload: the credential (ucx_attach.cc)
  kAmAttachReply = 7,  // header: AttachReplyHeader
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
// A process outside the job attaching to a listening rank (sent with UCP_AM_SEND_FLAG_REPLY,
// so the listener knows which of its connections it came on).
struct AttachHeader {
  uint32_t magic;      // kAttachMagic
  uint32_t version;    // kAttachVersion
  int32_t world_size;  // the job size the process expects (from its connection file)
  int32_t pad;
};
struct AttachReplyHeader {
  int32_t status;  // ErrorCode: kOk, kPermissionDenied, kInvalidArgument (wrong job size)
  int32_t rank;    // the attached process's number at this rank (>= world size)
  int32_t world_size;
  int32_t listener;  // the answering rank (an attaching process may wait on several)
};
inline constexpr uint32_t kAttachMagic = 0x4d434154;  // "MCAT"
// 2: every process that may open tcp uses the 512K receive segment (ucx_config.h); a client of
// version 1 kept UCX's 64K and aborted in UCX on a larger eager answer, so it is refused instead.
inline constexpr uint32_t kAttachVersion = 2;
inline constexpr size_t kMaxCredentialBytes = 4096;

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
// The endpoints to the job's ranks, a slot per rank. Slots are atomic because the progress
// thread reads them (it answers a peer's read request or write from inside a UCX callback)
// while Close takes them away (ThreadSanitizer saw the race on a plain vector). An endpoint
// taken out is closed by whoever took it; since UCX closes it under the worker lock, a callback
// that read the slot before keeps a valid endpoint until it returns. Callers of Submit and
// SendMessage must not race Close (transport.h), so only callbacks run meanwhile.
class EndpointTable {
 public:
  void Resize(int n) {
    slots_.reset(new std::atomic<ucp_ep_h>[n]);
    for (int i = 0; i < n; ++i) slots_[i].store(nullptr, std::memory_order_relaxed);
    size_ = n;
  }
  int size() const { return size_; }
  ucp_ep_h Get(int32_t rank) const {
    return rank >= 0 && rank < size_ ? slots_[rank].load(std::memory_order_acquire) : nullptr;
  }
  void Set(int32_t rank, ucp_ep_h ep) { slots_[rank].store(ep, std::memory_order_release); }
  // The endpoint of `rank`, now out of the table (null when there was none).
  ucp_ep_h Take(int32_t rank) { return slots_[rank].exchange(nullptr, std::memory_order_acq_rel); }

 private:
  std::unique_ptr<std::atomic<ucp_ep_h>[]> slots_;
  int size_ = 0;
};

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
struct AttachedPeer;
struct PeerErrorArg {
  UcxTransport* transport;
  int32_t peer;                      // a job rank, or -1 for an attached peer
  AttachedPeer* attached = nullptr;  // the attached peer (listener side)
};

// The error handler of every endpoint (ucx_transport.cc): `arg` is its PeerErrorArg.
void PeerErrorCallback(void* arg, ucp_ep_h ep, ucs_status_t status);
// The UCX transports of an endpoint's lanes ("posix/memory,sysv/memory"), for logs and for
// choosing the data path.
std::string LaneTransports(ucp_ep_h ep);
// Whether UCX gave `ep` a lane for rendezvous RMA (an rma_bw lane): a large AM then lands
// straight in the receiver's buffer; without one it travels as fragments the receiver copies.
bool HasRndvRmaLane(ucp_ep_h ep);

struct UcpListenerDeleter {
  void operator()(ucp_listener_h listener) const { ucp_listener_destroy(listener); }
};
using UcpListener = std::unique_ptr<std::remove_pointer_t<ucp_listener_h>, UcpListenerDeleter>;

// Listener side: one process outside the job, connected through the listener. Shared (the table
// and a sender posting on its endpoint) so that the endpoint is never closed under a sender;
// it is closed when the last owner lets go, never under attached_mutex_.
struct AttachedPeer {
  UcpEndpoint ep;
  PeerErrorArg error_arg;
  int32_t rank = -1;  // -1 until its credential was admitted
  Nanos since{0};     // when it connected (steady clock): unadmitted ones are reaped
  std::atomic<bool> gone{false};
  bool use_am = false;
  std::string path;
  std::string client;  // "a.b.c.d:port" of its connection (the listener's socket's peer)
  // The join slot it was moved into (AdoptAttached), -1 if none: eps_[slot] is this endpoint
  // too (not owned there), and it stays until Close even once gone, so eps_ never dangles.
  int32_t slot = -1;
};

class UcxTransport final : public Transport, public JoinSlots, public AttachNumbers {
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
  std::string NetDevices() const override { return net_devices_; }
  void MarkPeerDead(Rank peer, const std::string& why) override;
  void RetainUntilClosed(std::shared_ptr<void> keepalive) override {
    std::lock_guard<std::mutex> lock(retained_mutex_);
    retained_.push_back(std::move(keepalive));
  }
  void SetPeerFailureHandler(PeerFailureHandler handler) override;
  bool PeerDead(Rank peer) const override {
    return peer.value >= 0 && peer.value < slots_ && TransfersRefused(peer.value);
  }
  Status AdoptAttached(Rank attached, Rank slot) override;
  Status TakeJoinSlot(Rank listener, Rank slot) override;
  Result<uint16_t> Listen(const ListenConfig& config, AttachCheck check) override;
  size_t attached_peers() const override;
  uint64_t refused_data_messages() const override { return refused_data_messages_.load(); }
  std::map<std::string, uint64_t> refused_data_messages_by_peer() const override {
    std::lock_guard<std::mutex> lock(refusals_mutex_);
    return refused_by_peer_;
  }
  Status NumberAttachedFrom(int32_t first) override;
  Rank AttachedAs(Rank listener) const override { return Rank{SourceFor(listener.value)}; }
  Status Attach(Rank listener, const std::string& host, uint16_t port,
                std::span<const std::byte> credential, Nanos timeout, int* job_size) override;
  void BeginShutdown() override { shutting_down_ = true; }
  Status Close(Nanos timeout) override;

  // Callbacks from UCX (static trampolines forward here).
  ucs_status_t OnControl(const void* header, size_t header_length, void* data, size_t length,
                         const ucp_am_recv_param_t* param);
  ucs_status_t OnWrite(const void* header, size_t header_length, void* data, size_t length,
                       const ucp_am_recv_param_t* param);
  ucs_status_t OnAck(unsigned id, const void* header, size_t header_length, void* data,
                     size_t length, const ucp_am_recv_param_t* param);
  ucs_status_t OnReadReq(const void* header, size_t header_length,
                         const ucp_am_recv_param_t* param);
  void OnPeerError(int32_t peer, ucs_status_t status);
  // Attaching (ucx_attach.cc).
  void OnConnRequest(ucp_conn_request_h request);
  ucs_status_t OnAttach(const void* header, size_t header_length, void* data, size_t length,
                        const ucp_am_recv_param_t* param);
  ucs_status_t OnAttachReply(const void* header, size_t header_length);
  void OnAttachedError(AttachedPeer* peer, ucs_status_t status);
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
  // The endpoint's lanes and data path of job rank `peer` (paths_, use_am_, am_zero_copy_).
  void DescribeEndpoint(int32_t peer);
  // The number this process goes by at `peer`: self_, or on a process outside the job the
  // number the listener `peer` gave it.
  int32_t SourceFor(int32_t peer) const {
    // A joined store rank also answers the processes attached to its own listener as itself.
    if (peer < 0 || peer >= static_cast<int32_t>(attached_as_.size()) || attached_as_[peer] < 0) {
      return self_.value;
    }
    return attached_as_[peer];
  }
  // Listener side: the admitted attached peer `rank`, or null (gone or never admitted).
  std::shared_ptr<AttachedPeer> FindAttached(int32_t rank) const;
  bool IsAttached(int32_t rank) const { return rank >= world_size_ && FindAttached(rank); }
  // A control message from attached peer `rank`: true when it came on that peer's connection
  // (its reply endpoint), so one attached process cannot speak as another.
  bool AttachedSenderMatches(int32_t rank, const ucp_am_recv_param_t* param) const;
  // A job rank, or an attached peer on its own connection.
  bool KnownSender(int32_t rank, const ucp_am_recv_param_t* param) const {
    return rank >= 0 && (rank < world_size_ || CameFrom(rank, param));
  }
  // A data-path message that names `rank` as its sender: true when it came on that rank's own
  // endpoint (every data-path message is sent with UCP_AM_SEND_FLAG_REPLY, so UCX says which),
  // never on the strength of the number in its header. Counts and logs (once) what it refuses.
  bool DataSender(int32_t rank, const ucp_am_recv_param_t* param);
  // DataSender's check alone (OnAck makes it under tokens_mutex_, and counts after).
  bool CameFrom(int32_t rank, const ucp_am_recv_param_t* param) const;
  // Counts (by the endpoint it came on) and logs (once) a refused message claiming `rank`.
  void CountRefusal(int32_t rank, const ucp_am_recv_param_t* param);
  // The name of the endpoint a message came on (refused_data_messages_by_peer's keys).
  std::string SenderName(const ucp_am_recv_param_t* param) const;
  // The endpoint of `peer` (job rank or attached), kept alive by `*keep` (attached peers).
  ucp_ep_h EndpointOf(int32_t peer, std::shared_ptr<AttachedPeer>* keep) const;
  // Listener side: closes attached peers that are gone, refused, or never presented a
  // credential. Called by the progress thread outside ucp_worker_progress, and by Close.
  void ReapAttached(bool all);
  // Listener side: shuts down accepted sockets that carried no whole connection request within
  // kHandshakeDeadline (listener_sockets.h says why). Progress thread only, from ReapAttached.
  void ShutStalledHandshakes();
  Status SendAttachReply(ucp_ep_h ep, ErrorCode status, int32_t rank);
  // The imported region of `peer` containing [addr, +length), or null. Lock-free on a repeat
  // hit (a per-thread cache checked against imports_version_); valid until Close.
  const RkeyHolder* FindImported(int32_t peer, uint64_t addr, uint64_t length);
  std::string PeerName(int32_t peer) const { return "rank " + std::to_string(peer); }

  UcxConfig config_;
  Rank self_;
  int world_size_;
  // Peer slots: the job's ranks, then kMaxJoinedRanks join slots (join_slots.h); every per-peer
  // array is this long, and attached processes are numbered from here up.
  int slots_;
  // RetainUntilClosed: released in Close once the progress thread stopped; declared before the
  // worker so that, without Close, it is destroyed after it too.
  std::mutex retained_mutex_;
  std::vector<std::shared_ptr<void>> retained_;
  UcpContext context_;  // declared before worker_: destroyed after it
  UcpWorker worker_;
  std::vector<std::byte> local_address_;
  std::string net_devices_;  // UCX_NET_DEVICES as UCX read it; empty for "all"
  EndpointTable eps_;
  std::vector<std::unique_ptr<PeerErrorArg>> error_args_;  // outlive the endpoints
  std::vector<char> use_am_;                               // per peer: AM data path (1) or RMA (0)
  std::vector<char> am_zero_copy_;  // per peer: the AM rendezvous puts into the target buffer
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
  // Acknowledgement tokens: unguessable, so a process outside the job cannot complete or fail
  // a transfer by naming its token (tokens 1, 2, 3 ... were).
  TokenSource token_source_;
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
  // Listener side of attaching (ucx_attach.cc). attached_mutex_ is never held across a UCX
  // call: UCX callbacks take it while UCX holds the worker lock.
  UcpListener listener_;                // set by Listen, destroyed first by Close
  std::atomic<bool> listening_{false};  // the progress thread's view of listener_
  mutable std::mutex attached_mutex_;
  AttachCheck attach_check_;
  std::vector<std::shared_ptr<AttachedPeer>> unadmitted_;
  std::unordered_map<int32_t, std::shared_ptr<AttachedPeer>> attached_;  // by rank
  std::vector<std::shared_ptr<AttachedPeer>> doomed_;                    // closed by ReapAttached
  int32_t next_attached_rank_ = 0;
  int32_t first_attached_ = 0;  // NumberAttachedFrom (guarded by attached_mutex_)
  // Connections refused before an endpoint was made (not a UCX client), and when the last
  // warning about them was logged (steady clock, ns).
  std::atomic<uint64_t> refused_connections_{0};
  std::atomic<uint64_t> refused_data_messages_{0};
  mutable std::mutex refusals_mutex_;                // held alone: never with another lock
  std::map<std::string, uint64_t> refused_by_peer_;  // by SenderName; guarded by refusals_mutex_
  std::atomic<int64_t> last_refusal_log_ns_{0};
  uint16_t listen_port_ = 0;  // set by Listen
  // Accepted sockets without a connection request yet, by "fd/peer": when first seen
  // (ShutStalledHandshakes, progress thread only).
  std::map<std::string, Nanos> handshakes_;
  std::atomic<uint64_t> stalled_handshakes_{0};
  std::atomic<bool> reap_wanted_{false};
  Nanos next_reap_{0};
  // Attaching side: the number each listening rank gave this process (-1: not attached there).
  std::vector<int32_t> attached_as_;
  struct AttachWait {
    bool done = false;
    ErrorCode status = ErrorCode::kOk;
    int32_t rank = -1;
    int32_t world_size = 0;
    ucs_status_t why = UCS_OK;  // what UCX reported when the endpoint failed before an answer
  };
  // Attach's two halves: the credential sent on `ep` (to listener rank `r`) and its answer
  // waited for until `deadline`; then what a failed answer means, naming `where`.
  AttachWait SendAttachAndWait(ucp_ep_h ep, int32_t r, std::span<const std::byte> credential,
                               Nanos deadline);
  Status AttachFailure(const AttachWait& result, const std::string& where, Nanos timeout) const;
  // An attach to listener rank `r` at `listener` ("a.b.c.d:port") got no answer: its message is
  // still pending on an endpoint whose connection never completed (the listener's process is
  // stopped: its kernel took the TCP connection, its UCX never answered). UCX 1.13 cannot
  // cancel that send, refuses a force close of an endpoint without the peer error mode, and
  // aborts the process when the worker is destroyed with it pending (ucp_ep.c "pending request
  // ... should have been flushed"). So the connection's socket is shut down, and UCX fails the
  // endpoint itself, completing the send with an error. True once it did (within 2 s).
  bool FailUnansweredAttach(int32_t r, const std::string& listener);
  // Endpoints whose pending attach could not be failed: never closed, and the worker is then
  // kept (not destroyed) when the transport closes (guarded by attach_wait_mutex_).
  std::vector<ucp_ep_h> stuck_attaches_;
  std::mutex attach_wait_mutex_;
  std::condition_variable attach_wait_cv_;
  std::unordered_map<int32_t, AttachWait> attach_waits_;  // by listener rank

  std::atomic<bool> running_{false};
  std::atomic<bool> closing_{false};
  std::atomic<bool> shutting_down_{false};
  std::thread progress_thread_;
};

}  // namespace mooncake::transport
