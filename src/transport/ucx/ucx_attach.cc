// Processes outside the job (transport.h, "Attaching"): the listener side (Listen, the
// connection requests, the credential check, the table of attached peers and its reaping) and
// the attaching side (Attach).
//
// Endpoints made through the listener keep UCX's default error mode (shared-memory transports
// refuse the peer error mode, and a process on the same host should move bytes through shared
// memory), but always carry an error handler: the connection manager's socket reports a refused
// connection, and a process that left or died, through it (measured with UCX 1.13: "Connection
// reset by remote peer" on the listener within milliseconds of the client's exit, with
// sysv/posix/cma lanes kept).
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "common/log.h"
#include "common/tcp_probe.h"
#include "common/units.h"
#include "transport/ucx/listener_sockets.h"
#include "transport/ucx/ucx_impl.h"
#include "transport/ucx/ucx_send_params.h"

namespace mooncake::transport {
namespace {

// An attached connection that has not presented an admitted credential is closed after this.
constexpr Nanos kUnadmittedGrace = std::chrono::seconds(10);
// A refused one is closed after this (its refusal must leave first).
constexpr Nanos kRefusedGrace = std::chrono::seconds(1);
constexpr Nanos kReapInterval = std::chrono::seconds(1);
// A connection that has not sent a whole UCX connection request within this is ended (UCX itself
// would hold its socket for as long as the peer keeps it open).
constexpr Nanos kHandshakeDeadline = std::chrono::seconds(5);
// Refused connections are logged at most this often (a scan of the port must not flood the log).
constexpr Nanos kRefusalLogInterval = std::chrono::seconds(10);

// UCX 1.13 hands a connection request to the listener once 16 bytes or more arrived on the
// socket, whatever they were, and ucp_ep_create then parses them without a length: garbage
// either aborted the process (an assertion in ucp_address_unpack: "addr version 8") or failed
// in a way that leaves the request and its socket owned by nobody (UCS_ERR_UNSUPPORTED for an
// unknown sa_data version, returned before the request is rejected): one fd leaked per
// connection. So the listener checks the request's header bytes itself first and rejects
// (ucp_listener_reject closes the socket) what no UCX client sends. The bytes sit right after
// UCX's own ucp_conn_request_t (ucp/core/ucp_ep.h of 1.13), mirrored here for its size.
struct UcxConnRequestV113 {
  void* listener;
  void* uct_listener;
  void* uct_req;
  uint8_t cm_idx;
  char dev_name[32];  // UCT_DEVICE_NAME_MAX
  void* remote_dev_addr;
  sockaddr_storage client_address;
  void* ep;
};

// True when the request's private data starts as a UCX client's does: sa_data (8-byte endpoint
// id, a header whose 3 high bits are its version: v1 with the CM address mode, or v2) and a
// worker address of version 1 or 2 (its low 4 bits). Other UCX versions: not checked.
// Not instrumented by ASan: for a request shorter than its header UCX allocated fewer bytes
// than these reads (and reads them itself in ucp_ep_create); only the bytes' values matter.
__attribute__((no_sanitize("address"))) bool PlausibleConnRequest(ucp_conn_request_h request) {
#if UCP_API_MAJOR == 1 && UCP_API_MINOR == 13
  const auto* sa = reinterpret_cast<const uint8_t*>(request) + sizeof(UcxConnRequestV113);
  const int sa_version = sa[8] >> 5;
  const uint8_t* address = nullptr;
  if (sa_version == 0) {           // v1: header, addr_mode, dev_index
    if (sa[9] != 2) return false;  // UCP_WIREUP_SA_DATA_CM_ADDR
    address = sa + 11;
  } else if (sa_version == 1) {  // v2: header only
    address = sa + 9;
  } else {
    return false;
  }
  const int address_version = address[0] & 0x0f;
  return address_version == 0 || address_version == 1;
#else
  (void)request;
  return true;
#endif
}

void ConnRequestTrampoline(ucp_conn_request_h request, void* arg) {
  static_cast<UcxTransport*>(arg)->OnConnRequest(request);
}

void FreeAttachReply(void* request, ucs_status_t, void* user_data) {
  delete static_cast<AttachReplyHeader*>(user_data);
  ucp_request_free(request);
}

struct OutgoingAttach {
  AttachHeader header;
  std::vector<std::byte> credential;
};
void FreeAttachSend(void* request, ucs_status_t, void* user_data) {
  delete static_cast<OutgoingAttach*>(user_data);
  ucp_request_free(request);
}

// Why a listener refused an attaching process, for its log.
std::string RefusalReason(ErrorCode code, int32_t claimed_world, int32_t world) {
  switch (code) {
    case ErrorCode::kPermissionDenied:
      return "wrong job token";
    case ErrorCode::kInvalidArgument:
      return "its connection file names a job of " + std::to_string(claimed_world) +
             " ranks, this one has " + std::to_string(world);
    default:
      return "not a mooncake attach message";
  }
}

// Endpoints made through a listener: UCX's default error mode on both sides (see the top of the
// file), whatever transports each side was configured with. The two ends of a connection must
// agree on it: a client of a tcp-only job that asked for the peer mode on one side only got
// "Endpoint is not connected".
constexpr ucp_err_handling_mode_t kAttachedErrorMode = UCP_ERR_HANDLING_MODE_NONE;

std::string HostPort(const std::string& host, uint16_t port) {
  return host + ":" + std::to_string(port);
}

// A port given by the user that another socket holds, said in those words: UCX logs its own
// ERROR line for it and returns "Device is busy". Bound as UCX binds (SO_REUSEADDR), then freed
// for UCX at once.
Status CheckPortFree(const sockaddr_in& sa, const std::string& address) {
  const uint16_t port = ntohs(sa.sin_port);
  if (port == 0) return Status::Ok();
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Ok();  // UCX will say what is wrong
  const int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const int err = bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0 ? 0 : errno;
  close(fd);
  if (err == EADDRINUSE) {
    return InvalidArgument("cannot listen on " + HostPort(address, port) +
                           ": address already in use (another process holds port " +
                           std::to_string(port) + "; pick another, or 0 for a free one)");
  }
  return Status::Ok();
}

}  // namespace

Result<uint16_t> UcxTransport::Listen(const ListenConfig& config, AttachCheck check) {
  if (listener_) return InvalidArgument("this rank listens already");
  if (!check) return InvalidArgument("Listen needs a credential check");
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(config.port);
  if (inet_pton(AF_INET, config.address.c_str(), &sa.sin_addr) != 1) {
    return InvalidArgument("listen address '" + config.address + "' is not an IPv4 address");
  }
  MC_RETURN_IF_ERROR(CheckPortFree(sa, config.address));
  {
    std::lock_guard<std::mutex> lock(attached_mutex_);
    attach_check_ = std::move(check);
    // Above the join slots: no attached number is a store rank's.
    next_attached_rank_ = std::max(slots_, first_attached_);
  }
  ucp_listener_params_t lp{};
  lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  lp.sockaddr.addr = reinterpret_cast<const sockaddr*>(&sa);
  lp.sockaddr.addrlen = sizeof sa;
  lp.conn_handler.cb = ConnRequestTrampoline;
  lp.conn_handler.arg = this;
  ucp_listener_h listener = nullptr;
  ucs_status_t st = ucp_listener_create(worker_.get(), &lp, &listener);
  if (st != UCS_OK) {
    return InvalidArgument("cannot listen on " + HostPort(config.address, config.port) + ": " +
                           ucs_status_string(st));
  }
  listener_.reset(listener);
  ucp_listener_attr_t la{};
  la.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  if ((st = ucp_listener_query(listener, &la)) != UCS_OK) {
    return Internal(std::string("ucp_listener_query: ") + ucs_status_string(st));
  }
  const auto* bound = reinterpret_cast<const sockaddr_in*>(&la.sockaddr);
  listen_port_ = ntohs(bound->sin_port);
  listening_ = true;
  return static_cast<uint16_t>(ntohs(bound->sin_port));
}

Status UcxTransport::NumberAttachedFrom(int32_t first) {
  if (listener_) return InvalidArgument("attach numbers are chosen before Listen");
  std::lock_guard<std::mutex> lock(attached_mutex_);
  first_attached_ = first;
  return Status::Ok();
}

void UcxTransport::OnConnRequest(ucp_conn_request_h request) {
  bool accepting;
  {
    std::lock_guard<std::mutex> lock(attached_mutex_);
    accepting = attach_check_ != nullptr && !closing_;
  }
  if (!accepting) {
    ucp_listener_reject(listener_.get(), request);
    return;
  }
  if (!PlausibleConnRequest(request)) {
    ucp_listener_reject(listener_.get(), request);  // closes its socket: nothing is kept
    refused_connections_.fetch_add(1, std::memory_order_relaxed);
    const int64_t now = SteadyClock().Now().count();
    int64_t last = last_refusal_log_ns_.load();
    if (now - last >= kRefusalLogInterval.count() &&
        last_refusal_log_ns_.compare_exchange_strong(last, now)) {
      log::Warn("refused a connection to the listener that is not a UCX client ({} so far)",
                refused_connections_.load());
    }
    return;
  }
  auto peer = std::make_shared<AttachedPeer>();
  peer->error_arg = PeerErrorArg{this, -1, peer.get()};
  ucp_conn_request_attr_t attr{};
  attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
  if (ucp_conn_request_query(request, &attr) == UCS_OK &&
      attr.client_address.ss_family == AF_INET) {
    peer->client = Ipv4PeerName(&attr.client_address);
  }
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                  UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.conn_request = request;
  ep.err_mode = kAttachedErrorMode;
  ep.err_handler.cb = PeerErrorCallback;
  ep.err_handler.arg = &peer->error_arg;
  ucp_ep_h created = nullptr;
  ucs_status_t st = ucp_ep_create(worker_.get(), &ep, &created);
  if (st != UCS_OK) {
    log::Warn("cannot accept a connection: {}", ucs_status_string(st));
    return;
  }
  peer->ep.reset(created);
  peer->since = SteadyClock().Now();
  std::lock_guard<std::mutex> lock(attached_mutex_);
  unadmitted_.push_back(std::move(peer));
}

ucs_status_t UcxTransport::OnAttach(const void* header, size_t header_length, void* data,
                                    size_t length, const ucp_am_recv_param_t* param) {
  if (header_length != sizeof(AttachHeader) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ||
      !(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) || length > kMaxCredentialBytes) {
    return UCS_OK;  // not an attach we sent: a connection that never attaches is reaped
  }
  AttachHeader h;
  std::memcpy(&h, header, sizeof h);
  std::shared_ptr<AttachedPeer> peer;
  AttachCheck check;
  {
    std::lock_guard<std::mutex> lock(attached_mutex_);
    auto it = std::find_if(unadmitted_.begin(), unadmitted_.end(),
                           [&](const auto& p) { return p->ep.get() == param->reply_ep; });
    if (it == unadmitted_.end()) return UCS_OK;  // not a connection of our listener
    peer = *it;
    unadmitted_.erase(it);
    check = attach_check_;
  }
  ErrorCode code = ErrorCode::kOk;
  if (h.magic != kAttachMagic || h.version != kAttachVersion) {
    code = ErrorCode::kProtocolError;
  } else if (h.world_size != world_size_) {
    code = ErrorCode::kInvalidArgument;
  } else if (!check ||
             !check(std::span<const std::byte>(static_cast<const std::byte*>(data), length))) {
    code = ErrorCode::kPermissionDenied;
  }
  int32_t rank = -1;
  if (code == ErrorCode::kOk) {
    peer->path = LaneTransports(peer->ep.get());
    peer->use_am =
        config_.data_path == DataPath::kActiveMessage ||
        (config_.data_path == DataPath::kAuto && peer->path.find("tcp") != std::string::npos);
  }
  {
    std::lock_guard<std::mutex> lock(attached_mutex_);
    if (code == ErrorCode::kOk) {
      rank = next_attached_rank_++;
      peer->rank = rank;
      attached_[rank] = peer;
    } else {
      peer->since = SteadyClock().Now() - kUnadmittedGrace + kRefusedGrace;
      unadmitted_.push_back(peer);  // closed by the reaper once the refusal has left
    }
  }
  if (code == ErrorCode::kOk) {
    log::Debug("process {} attached ({})", rank, peer->path);
  } else {
    log::Warn("refused a process that tried to attach: {}",
              RefusalReason(code, h.world_size, world_size_));
  }
  Status s = SendAttachReply(peer->ep.get(), code, rank);
  if (!s.ok()) log::Warn("{}", s.ToString());
  return UCS_OK;
}

Status UcxTransport::SendAttachReply(ucp_ep_h ep, ErrorCode status, int32_t rank) {
  auto* h = new AttachReplyHeader{static_cast<int32_t>(status), rank, world_size_, self_.value};
  ucp_request_param_t rp = SendParams(FreeAttachReply, h);
  ucs_status_ptr_t req = ucp_am_send_nbx(ep, kAmAttachReply, h, sizeof *h, nullptr, 0, &rp);
  if (req == nullptr) {
    delete h;
  } else if (UCS_PTR_IS_ERR(req)) {
    delete h;
    return PeerFailure(std::string("attach reply not sent: ") +
                       ucs_status_string(UCS_PTR_STATUS(req)));
  }
  return Status::Ok();
}

void UcxTransport::OnAttachedError(AttachedPeer* peer, ucs_status_t status) {
  if (closing_) return;
  peer->gone = true;
  reap_wanted_ = true;
  if (peer->slot >= 0) return OnPeerError(peer->slot, status);  // a joined store rank
  const int32_t rank = peer->rank;
  if (rank < 0 || shutting_down_) return;
  log::Debug("attached process {} left: {}", rank, ucs_status_string(status));
  std::shared_ptr<PeerFailureHandler> handler;
  {
    std::lock_guard<std::mutex> lock(handler_mutex_);
    handler = failure_handler_;
  }
  if (handler && *handler) {
    (*handler)(Rank{rank}, std::string("the attached process left: ") + ucs_status_string(status));
  }
}

void UcxTransport::ReapAttached(bool all) {
  std::vector<std::shared_ptr<AttachedPeer>> closing;
  {
    std::lock_guard<std::mutex> lock(attached_mutex_);
    const Nanos now = SteadyClock().Now();
    auto expired = [&](const std::shared_ptr<AttachedPeer>& p) {
      return all || p->gone || now - p->since >= kUnadmittedGrace;
    };
    for (auto& p : unadmitted_) {
      if (expired(p)) closing.push_back(std::move(p));
    }
    std::erase(unadmitted_, nullptr);
    for (auto it = attached_.begin(); it != attached_.end();) {
      // An adopted peer stays until Close: eps_[slot] uses its endpoint without owning it.
      if (all || (it->second->gone && it->second->slot < 0)) {
        closing.push_back(std::move(it->second));
        it = attached_.erase(it);
      } else {
        ++it;
      }
    }
    reap_wanted_ = false;
    next_reap_ = now + kReapInterval;
  }
  // Endpoints close here (UcpEndpoint forces them), outside attached_mutex_, unless a sender
  // still holds one: then it closes when that send was posted.
  closing.clear();
  if (!all) ShutStalledHandshakes();
}

void UcxTransport::ShutStalledHandshakes() {
  std::set<std::string> known;  // the connections an endpoint was made for
  {
    std::lock_guard<std::mutex> lock(attached_mutex_);
    for (const auto& p : unadmitted_) known.insert(p->client);
    for (const auto& [rank, p] : attached_) known.insert(p->client);
  }
  const Nanos now = SteadyClock().Now();
  std::map<std::string, Nanos> still_waiting;
  for (const AcceptedSocket& socket : SocketsAcceptedOn(listen_port_)) {
    if (known.count(socket.peer) != 0) continue;
    // Keyed by descriptor and peer: a number UCX reuses for a new connection starts afresh.
    const std::string key = std::to_string(socket.fd) + "/" + socket.peer;
    auto it = handshakes_.find(key);
    const Nanos since = it == handshakes_.end() ? now : it->second;
    if (now - since < kHandshakeDeadline) {
      still_waiting[key] = since;
      continue;
    }
    // Not closed here (UCX owns the descriptor): ended, so UCX closes it itself.
    (void)shutdown(socket.fd, SHUT_RDWR);
    const uint64_t n = stalled_handshakes_.fetch_add(1, std::memory_order_relaxed) + 1;
    int64_t last = last_refusal_log_ns_.load();
    if (now.count() - last >= kRefusalLogInterval.count() &&
        last_refusal_log_ns_.compare_exchange_strong(last, now.count())) {
      log::Warn(
          "ended a connection to the listener from {} that sent no connection request "
          "within {} ({} so far)",
          socket.peer, FormatDuration(kHandshakeDeadline), n);
    }
  }
  handshakes_ = std::move(still_waiting);
}

std::shared_ptr<AttachedPeer> UcxTransport::FindAttached(int32_t rank) const {
  std::lock_guard<std::mutex> lock(attached_mutex_);
  auto it = attached_.find(rank);
  if (it == attached_.end() || it->second->gone) return nullptr;
  return it->second;
}

bool UcxTransport::AttachedSenderMatches(int32_t rank, const ucp_am_recv_param_t* param) const {
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)) return false;
  auto peer = FindAttached(rank);
  return peer != nullptr && peer->ep.get() == param->reply_ep;
}

size_t UcxTransport::attached_peers() const {
  std::lock_guard<std::mutex> lock(attached_mutex_);
  return attached_.size();
}

ucp_ep_h UcxTransport::EndpointOf(int32_t peer, std::shared_ptr<AttachedPeer>* keep) const {
  if (peer >= 0 && peer < slots_) {
    return eps_.Get(peer);
  }
  *keep = FindAttached(peer);
  return *keep ? (*keep)->ep.get() : nullptr;
}

Status UcxTransport::AdoptAttached(Rank attached, Rank slot) {
  if (slot.value < world_size_ || slot.value >= slots_) {
    return InvalidArgument("rank " + std::to_string(slot.value) +
                           " is not a join slot of a job of " + std::to_string(world_size_) +
                           " ranks");
  }
  if (eps_.Get(slot.value) != nullptr) {
    return Status(ErrorCode::kAlreadyExists,
                  "join slot " + std::to_string(slot.value) + " is taken");
  }
  std::shared_ptr<AttachedPeer> peer = FindAttached(attached.value);
  if (peer == nullptr) {
    return NotFound("no attached process " + std::to_string(attached.value) + " to adopt");
  }
  {
    std::lock_guard<std::mutex> lock(attached_mutex_);
    if (peer->slot >= 0) return InvalidArgument("the attached process holds a join slot already");
    peer->slot = slot.value;
  }
  peer_failed_[slot.value] = peer_declared_dead_[slot.value] = false;
  paths_[slot.value] = peer->path;
  use_am_[slot.value] = peer->use_am;
  am_zero_copy_[slot.value] = HasRndvRmaLane(peer->ep.get());
  eps_.Set(slot.value, peer->ep.get());
  log::Debug("attached process {} is rank {} now ({})", attached.value, slot.value, peer->path);
  return Status::Ok();
}

Status UcxTransport::TakeJoinSlot(Rank listener, Rank slot) {
  if (listener.value < 0 || listener.value >= world_size_ || attached_as_.empty() ||
      attached_as_[listener.value] < 0) {
    return InvalidArgument("not attached to rank " + std::to_string(listener.value));
  }
  if (slot.value < world_size_ || slot.value >= slots_) {
    return InvalidArgument("rank " + std::to_string(slot.value) + " is not a join slot");
  }
  attached_as_[listener.value] = slot.value;
  self_ = slot;
  return Status::Ok();
}

Status UcxTransport::Attach(Rank listener, const std::string& host, uint16_t port,
                            std::span<const std::byte> credential, Nanos timeout, int* job_size) {
  const int32_t r = listener.value;
  const std::string where = HostPort(host, port) + " (rank " + std::to_string(r) + ")";
  if (r < 0 || r >= slots_) {
    return InvalidArgument("rank " + std::to_string(r) + " is not in a job of " +
                           std::to_string(world_size_) + " ranks (nor one of its " +
                           std::to_string(kMaxJoinedRanks) + " join slots)");
  }
  if (credential.size() > kMaxCredentialBytes) return InvalidArgument("credential too long");
  if (eps_.Get(r) != nullptr) return InvalidArgument("already attached to " + where);
  SteadyClock clock;
  const Nanos deadline = clock.Now() + timeout;
  auto address = ResolveIpv4(host, port);
  if (!address.ok()) return address.status();
  // A refused connection (a job that has stopped) is a clear error at once, not a silent wait
  // for an answer that cannot come.
  Status listening = ProbeTcpListener(host, port, timeout);
  if (!listening.ok()) return listening.WithContext("rank " + std::to_string(r) + " of the job");
  if (attached_as_.empty()) attached_as_.assign(slots_, -1);
  peer_failed_[r] = false;  // a failed try at another address of this rank is not this one's
  {
    std::lock_guard<std::mutex> lock(attach_wait_mutex_);
    attach_waits_[r] = AttachWait{};
  }
  error_args_.push_back(std::make_unique<PeerErrorArg>(PeerErrorArg{this, r}));
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                  UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  ep.sockaddr.addr = reinterpret_cast<const sockaddr*>(&*address);
  ep.sockaddr.addrlen = sizeof *address;
  ep.err_mode = kAttachedErrorMode;
  ep.err_handler.cb = PeerErrorCallback;
  ep.err_handler.arg = error_args_.back().get();
  ucp_ep_h created = nullptr;
  ucs_status_t st = ucp_ep_create(worker_.get(), &ep, &created);
  if (st != UCS_OK) return PeerFailure("cannot connect to " + where + ": " + ucs_status_string(st));
  eps_.Set(r, created);
  const AttachWait result = SendAttachAndWait(created, r, credential, deadline);
  if (result.done && job_size != nullptr && result.world_size > 0) *job_size = result.world_size;
  const Status failed = AttachFailure(result, where, timeout);
  if (!failed.ok()) {
    if (!result.done && !FailUnansweredAttach(r, Ipv4PeerName(&*address))) {
      log::Warn("the unanswered attach to {} is still pending in UCX: its endpoint is kept", where);
      std::lock_guard<std::mutex> lock(attach_wait_mutex_);
      stuck_attaches_.push_back(eps_.Take(r));
      return failed;
    }
    const UcpEndpoint closing(eps_.Take(r));  // force-closed here
    return failed;
  }
  attached_as_[r] = result.rank;
  if (self_.value < 0) self_ = Rank{result.rank};
  DescribeEndpoint(r);
  return Status::Ok();
}

bool UcxTransport::FailUnansweredAttach(int32_t r, const std::string& listener) {
  {
    std::lock_guard<std::mutex> lock(attach_wait_mutex_);
    attach_waits_[r] = AttachWait{};  // OnPeerError marks it done when the endpoint fails
  }
  for (const AcceptedSocket& socket : SocketsConnectedTo(listener)) {
    (void)shutdown(socket.fd, SHUT_RDWR);  // UCX owns the descriptor and closes it itself
  }
  SteadyClock clock;
  const Nanos deadline = clock.Now() + std::chrono::seconds(2);
  std::unique_lock<std::mutex> lock(attach_wait_mutex_);
  while (!attach_waits_[r].done && clock.Now() < deadline) {
    attach_wait_cv_.wait_for(lock, std::chrono::milliseconds(1));
  }
  const bool failed = attach_waits_[r].done;
  attach_waits_.erase(r);
  return failed;
}

UcxTransport::AttachWait UcxTransport::SendAttachAndWait(ucp_ep_h ep, int32_t r,
                                                         std::span<const std::byte> credential,
                                                         Nanos deadline) {
  SteadyClock clock;
  auto* out = new OutgoingAttach{AttachHeader{kAttachMagic, kAttachVersion, world_size_, 0},
                                 std::vector<std::byte>(credential.begin(), credential.end())};
  ucp_request_param_t rp = SendParams(FreeAttachSend, out, UCP_AM_SEND_FLAG_REPLY);
  ucs_status_ptr_t req = ucp_am_send_nbx(ep, kAmAttach, &out->header, sizeof out->header,
                                         out->credential.data(), out->credential.size(), &rp);
  if (req == nullptr) delete out;
  AttachWait result;
  if (req != nullptr && UCS_PTR_IS_ERR(req)) {
    delete out;
    result = AttachWait{true, ErrorCode::kPeerFailure, -1, 0};
  } else {
    std::unique_lock<std::mutex> lock(attach_wait_mutex_);
    while (!attach_waits_[r].done && clock.Now() < deadline) {
      attach_wait_cv_.wait_for(lock, std::chrono::milliseconds(1));
    }
    result = attach_waits_[r];
    attach_waits_.erase(r);
  }
  return result;
}

Status UcxTransport::AttachFailure(const AttachWait& result, const std::string& where,
                                   Nanos timeout) const {
  Status failed;
  if (!result.done) {
    failed = Timeout("no answer from " + where + " within " +
                     std::to_string(timeout.count() / 1'000'000) + " ms");
  } else if (result.status == ErrorCode::kPermissionDenied) {
    failed = PermissionDenied(where + " refused this process: wrong job token");
  } else if (result.status == ErrorCode::kInvalidArgument) {
    failed = InvalidArgument(where + " belongs to a job of " + std::to_string(result.world_size) +
                             " ranks, not " + std::to_string(world_size_) +
                             ": the connection file is not this job's");
  } else if (result.status == ErrorCode::kPeerFailure && result.why != UCS_OK) {
    // UCX took the connection and then failed it: on either side, the connection's local
    // device may not be one UCX was started with (UCX_NET_DEVICES, transport.devices).
    failed = PeerFailure("the connection to " + where +
                         " failed in UCX: " + ucs_status_string(result.why) +
                         " (is its network device one that UCX_NET_DEVICES leaves out, here or "
                         "at the listener?)");
  } else if (result.status != ErrorCode::kOk) {
    failed = Status(result.status, "attaching to " + where + " failed (" +
                                       std::string(ErrorCodeName(result.status)) + ")");
  }
  return failed;
}

ucs_status_t UcxTransport::OnAttachReply(const void* header, size_t header_length) {
  if (header_length != sizeof(AttachReplyHeader)) return UCS_OK;
  AttachReplyHeader h;
  std::memcpy(&h, header, sizeof h);
  std::lock_guard<std::mutex> lock(attach_wait_mutex_);
  auto it = attach_waits_.find(h.listener);
  if (it == attach_waits_.end() || it->second.done) return UCS_OK;  // nobody waits for it
  it->second = AttachWait{true, static_cast<ErrorCode>(h.status), h.rank, h.world_size};
  attach_wait_cv_.notify_all();
  return UCS_OK;
}

}  // namespace mooncake::transport
