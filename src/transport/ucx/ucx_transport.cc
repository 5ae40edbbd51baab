#include <poll.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "common/log.h"
#include "transport/ucx/ucx_impl.h"

namespace mooncake::transport {

Status UcxError(const std::string& what, ucs_status_t status) {
  return Status(ErrorCode::kInternal, what + ": " + ucs_status_string(status));
}

namespace {

ucs_status_t ControlTrampoline(void* arg, const void* header, size_t header_length, void* data,
                               size_t length, const ucp_am_recv_param_t* param) {
  return static_cast<UcxTransport*>(arg)->OnControl(header, header_length, data, length, param);
}
ucs_status_t WriteTrampoline(void* arg, const void* header, size_t header_length, void* data,
                             size_t length, const ucp_am_recv_param_t* param) {
  return static_cast<UcxTransport*>(arg)->OnWrite(header, header_length, data, length, param);
}
ucs_status_t WriteAckTrampoline(void* arg, const void* header, size_t header_length, void* data,
                                size_t length, const ucp_am_recv_param_t* param) {
  return static_cast<UcxTransport*>(arg)->OnAck(kAmWriteAck, header, header_length, data, length,
                                                param);
}
ucs_status_t ReadRespTrampoline(void* arg, const void* header, size_t header_length, void* data,
                                size_t length, const ucp_am_recv_param_t* param) {
  return static_cast<UcxTransport*>(arg)->OnAck(kAmReadResp, header, header_length, data, length,
                                                param);
}
ucs_status_t ReadReqTrampoline(void* arg, const void* header, size_t header_length, void*, size_t,
                               const ucp_am_recv_param_t* param) {
  return static_cast<UcxTransport*>(arg)->OnReadReq(header, header_length, param);
}
ucs_status_t AttachTrampoline(void* arg, const void* header, size_t header_length, void* data,
                              size_t length, const ucp_am_recv_param_t* param) {
  return static_cast<UcxTransport*>(arg)->OnAttach(header, header_length, data, length, param);
}
ucs_status_t AttachReplyTrampoline(void* arg, const void* header, size_t header_length, void*,
                                   size_t, const ucp_am_recv_param_t*) {
  return static_cast<UcxTransport*>(arg)->OnAttachReply(header, header_length);
}

// A control message in flight: UCX 1.13 reads the header and payload until the send completes.
// Owned jointly by the send callback and the sender (which may wait for `sent`): the last of the
// two to let go deletes it.
struct OutgoingControl {
  ControlHeader header;
  std::vector<std::byte> payload;
  std::atomic<bool> sent{false};
  std::atomic<int> owners{2};
  void Release() {
    if (owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

void FreeOnSend(void* request, ucs_status_t, void* user_data) {
  auto* out = static_cast<OutgoingControl*>(user_data);
  out->sent.store(true, std::memory_order_release);
  ucp_request_free(request);
  out->Release();
}

// Set while this thread runs inside a UCX callback (ucp_worker_progress must not recurse).
thread_local bool t_in_callback = false;
struct InCallback {
  bool saved = t_in_callback;
  InCallback() { t_in_callback = true; }
  ~InCallback() { t_in_callback = saved; }
};

}  // namespace

void PeerErrorCallback(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* a = static_cast<PeerErrorArg*>(arg);
  if (a->attached != nullptr) {
    a->transport->OnAttachedError(a->attached, status);
  } else {
    a->transport->OnPeerError(a->peer, status);
  }
}

// The UCX transports of an endpoint's lanes, read from ucp_ep_print_info ("posix/memory").
// ucp_ep_print_info's text: a "lane[i]: ..." line per lane, with its uses ("am", "rma_bw#0").
static std::string EndpointInfo(ucp_ep_h ep) {
  char* text = nullptr;
  size_t size = 0;
  FILE* stream = open_memstream(&text, &size);
  if (stream == nullptr) return "";
  ucp_ep_print_info(ep, stream);
  std::fclose(stream);
  std::string all(text, size);
  std::free(text);
  return all;
}

bool HasRndvRmaLane(ucp_ep_h ep) { return EndpointInfo(ep).find(" rma_bw#") != std::string::npos; }

std::string LaneTransports(ucp_ep_h ep) {
  std::set<std::string> names;
  const std::string all = EndpointInfo(ep);
  size_t pos = 0;
  while ((pos = all.find("lane[", pos)) != std::string::npos) {
    size_t eol = all.find('\n', pos);
    std::string line = all.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    // "lane[0]:  1:posix/memory.0 md[1] ..." -> "posix/memory"
    size_t colon = line.find(':', line.find(']'));
    size_t start = line.find(':', colon + 1);
    if (start != std::string::npos) {
      size_t end = line.find_first_of(" .", start + 1);
      names.insert(line.substr(start + 1, end - start - 1));
    }
    pos = eol == std::string::npos ? all.size() : eol;
  }
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out.empty() ? "unknown" : out;
}

namespace {
uint64_t NextInstanceId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

UcxTransport::UcxTransport(const UcxConfig& config, Rank self, int world_size)
    : config_(config),
      self_(self),
      world_size_(world_size),
      slots_(world_size + kMaxJoinedRanks),
      instance_id_(NextInstanceId()) {}

Status UcxTransport::Init() {
  Status s = CreateContext();
  if (s.ok()) s = CreateWorker();
  if (s.ok()) s = RegisterAmHandlers();
  if (!s.ok()) return s;
  // An event fd lets the idle progress thread sleep until a message arrives instead of polling
  // with a back-off (which added up to max_sleep to every RPC). Without one it falls back to it.
  if (ucp_worker_get_efd(worker_.get(), &efd_) != UCS_OK) efd_ = -1;
  peer_failed_.reset(new std::atomic<bool>[slots_]);
  peer_declared_dead_.reset(new std::atomic<bool>[slots_]);
  for (int i = 0; i < slots_; ++i) peer_failed_[i] = peer_declared_dead_[i] = false;
  for (int i = 0; i < slots_; ++i) {
    imported_.push_back(std::make_unique<RegionTable<std::shared_ptr<RkeyHolder>>>());
  }
  // Sized once: ConnectAll fills the job's slots, Attach (a process outside the job) only some,
  // AdoptAttached the join slots.
  eps_.Resize(slots_);
  use_am_.assign(slots_, 0);
  am_zero_copy_.assign(slots_, 0);
  paths_.assign(slots_, "");
  running_ = true;
  progress_thread_ = std::thread([this] { ProgressLoop(); });
  return Status::Ok();
}

Status UcxTransport::RegisterAmHandlers() {
  struct Handler {
    unsigned id;
    ucp_am_recv_callback_t cb;
  };
  const Handler handlers[] = {
      {kAmControl, ControlTrampoline},        {kAmWrite, WriteTrampoline},
      {kAmWriteAck, WriteAckTrampoline},      {kAmReadReq, ReadReqTrampoline},
      {kAmReadResp, ReadRespTrampoline},      {kAmAttach, AttachTrampoline},
      {kAmAttachReply, AttachReplyTrampoline}};
  for (const Handler& h : handlers) {
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = h.id;
    hp.cb = h.cb;
    hp.arg = this;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    ucs_status_t st = ucp_worker_set_am_recv_handler(worker_.get(), &hp);
    if (st != UCS_OK) return UcxError("ucp_worker_set_am_recv_handler", st);
  }
  return Status::Ok();
}

UcxTransport::~UcxTransport() {
  if (!closing_) (void)Close(Nanos(2'000'000'000));
}

// How long the progress thread stands aside while callers drive progress: it starts short so
// a caller that stops is relieved quickly, and grows while they keep going.
constexpr Nanos kAsideMin(50'000);
constexpr Nanos kAsideMax(1'000'000);

void UcxTransport::ProgressLoop() {
  SteadyClock clock;
  Nanos last_event = clock.Now();
  Nanos sleep(1'000);
  Nanos aside = kAsideMin;
  uint64_t seen_calls = caller_progress_calls_.load(std::memory_order_relaxed);
  while (running_.load(std::memory_order_acquire)) {
    if (listening_.load(std::memory_order_relaxed) &&
        (reap_wanted_.load(std::memory_order_relaxed) || clock.Now() > next_reap_)) {
      ReapAttached(false);
    }
    const uint64_t calls = caller_progress_calls_.load(std::memory_order_relaxed);
    if (callers_posting_.load(std::memory_order_relaxed) > 0 ||
        callers_waiting_.load(std::memory_order_relaxed) > 0 || calls != seen_calls) {
      // A caller posts or progresses the worker itself: leave it the core and the worker lock
      // and look again later (a counter, not a clock, keeps Progress() cheap for callers).
      // The look-again interval doubles while callers stay busy: each wake-up of this thread
      // costs the caller's core a context switch and cache lines mid-copy (at 1 MiB on shared
      // memory, waking every 50 us cost ~20 % of the bandwidth). Callers handle incoming
      // messages meanwhile, since their progress calls run every callback.
      seen_calls = calls;
      std::this_thread::sleep_for(aside);
      aside = std::min(aside * 2, kAsideMax);
      last_event = clock.Now();
      continue;
    }
    aside = kAsideMin;
    const Nanos now = clock.Now();
    if (ucp_worker_progress(worker_.get()) != 0) {
      last_event = now;
      sleep = Nanos(1'000);
      continue;
    }
    if (config_.busy_poll) continue;
    if (now - last_event < config_.idle_spin) {
      // Spin politely: a thread that woke this one (an RPC's caller) is often placed on the
      // same core by the scheduler, and an idle spin that never yields would hold that core
      // for the whole spin. Seen as RPCs from a busy client costing the master's full
      // idle_spin (2 ms) instead of ~80 us.
      std::this_thread::yield();
      continue;
    }
    if (efd_ >= 0) {
      // Idle: sleep until the worker has an event (arm fails with BUSY when one is pending).
      // The poll timeout bounds the wait for events UCX does not signal (and Close).
      ucs_status_t st = ucp_worker_arm(worker_.get());
      if (st == UCS_ERR_BUSY) continue;
      if (st == UCS_OK) {
        pollfd pfd{efd_, POLLIN, 0};
        const int timeout_ms =
            static_cast<int>(std::max<int64_t>(1, config_.max_event_wait.count() / 1'000'000));
        if (poll(&pfd, 1, timeout_ms) > 0) last_event = clock.Now();
        continue;
      }
    }
    // Idle: back off so oversubscribed ranks leave the cores to the ranks doing work.
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, config_.max_sleep);
  }
}

bool UcxTransport::Progress() {
  caller_progress_calls_.fetch_add(1, std::memory_order_relaxed);
  return ucp_worker_progress(worker_.get()) != 0;
}

Status UcxTransport::ConnectAll(const std::vector<std::vector<std::byte>>& addresses) {
  if (static_cast<int>(addresses.size()) != world_size_) {
    return InvalidArgument("ConnectAll got " + std::to_string(addresses.size()) +
                           " addresses for " + std::to_string(world_size_) + " ranks");
  }
  // UCX 1.13's shared-memory transports have no peer-failure handler, and asking for one makes
  // UCX refuse them; so peer-failure callbacks are requested only where every transport can
  // honour them (tcp, rdma). Elsewhere a dead peer is detected by deadlines, which every wait has.
  // On tcp alone the handler comes with UCX's default mode unless asked otherwise
  // (UcxConfig::tcp_peer_error_mode: the peer mode forces a copying rendezvous there).
  const TlsFamilies families = ClassifyTls(ResolveTls(config_.tls));
  const bool peer_errors = families.pinned && !families.shm;
  const bool tcp_only = families.tcp && !families.rdma;
  const bool peer_mode = peer_errors && (!tcp_only || config_.tcp_peer_error_mode);
  for (int r = 0; r < world_size_; ++r) {
    error_args_.push_back(std::make_unique<PeerErrorArg>(PeerErrorArg{this, r}));
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep.address = reinterpret_cast<const ucp_address_t*>(addresses[r].data());
    if (peer_errors) {
      ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
      ep.err_mode = peer_mode ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
      ep.err_handler.cb = PeerErrorCallback;
      ep.err_handler.arg = error_args_.back().get();
    }
    ucp_ep_h created = nullptr;
    ucs_status_t st = ucp_ep_create(worker_.get(), &ep, &created);
    if (st != UCS_OK) {
      return PeerFailure("cannot create an endpoint to " + PeerName(r) + ": " +
                         ucs_status_string(st));
    }
    eps_.Set(r, created);
    DescribeEndpoint(r);
  }
  return Status::Ok();
}

void UcxTransport::DescribeEndpoint(int32_t r) {
  paths_[r] = LaneTransports(eps_.Get(r));
  am_zero_copy_[r] = HasRndvRmaLane(eps_.Get(r));
  switch (config_.data_path) {
    case DataPath::kRma:
      use_am_[r] = 0;
      break;
    case DataPath::kActiveMessage:
      use_am_[r] = 1;
      break;
    case DataPath::kAuto:
      use_am_[r] = paths_[r].find("tcp") != std::string::npos;
      break;
  }
  log::Debug("endpoint to rank {}: {} ({})", r, paths_[r], use_am_[r] ? "am" : "rma");
}

std::string UcxTransport::DescribePath(Rank peer) const {
  if (peer.value >= slots_) {
    auto attached = FindAttached(peer.value);
    if (attached == nullptr) return "not connected";
    return attached->path + (attached->use_am ? " (am rendezvous)" : " (rma)");
  }
  if (eps_.Get(peer.value) == nullptr) return "not connected";
  if (!use_am_[peer.value]) return paths_[peer.value] + " (rma)";
  return paths_[peer.value] +
         (am_zero_copy_[peer.value] ? " (am rendezvous, zero-copy)" : " (am rendezvous)");
}

bool UcxTransport::UsesAm(int32_t peer) const { return use_am_[peer] != 0; }

void UcxTransport::SetMessageHandler(MessageHandler handler) {
  std::lock_guard<std::mutex> lock(handler_mutex_);
  handler_ = handler ? std::make_shared<MessageHandler>(std::move(handler)) : nullptr;
}

Status UcxTransport::SendMessage(Rank peer, std::span<const std::byte> payload) {
  std::shared_ptr<AttachedPeer> keep;  // an attached peer's endpoint stays open while we post
  ucp_ep_h ep = EndpointOf(peer.value, &keep);
  if (ep == nullptr) return PeerFailure("no endpoint to rank " + std::to_string(peer.value));
  if (peer.value < slots_ && peer_failed_[peer.value]) {
    return PeerFailure(PeerName(peer.value) + " has failed");
  }
  // The payload must live until UCX is done with it: a heap copy freed by the callback.
  auto* copy = new OutgoingControl{ControlHeader{SourceFor(peer.value)},
                                   std::vector<std::byte>(payload.begin(), payload.end())};
  ucp_request_param_t rp{};
  rp.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  // A process outside the job sends with its reply endpoint, which is how the listener checks
  // that the number in the header is the one it gave this connection.
  rp.flags = UCP_AM_SEND_FLAG_EAGER | (attached_as_.empty() ? 0 : UCP_AM_SEND_FLAG_REPLY);
  rp.cb.send = FreeOnSend;
  rp.user_data = copy;
  ucs_status_ptr_t req = ucp_am_send_nbx(ep, kAmControl, &copy->header, sizeof copy->header,
                                         copy->payload.data(), copy->payload.size(), &rp);
  if (req == nullptr) {
    delete copy;
  } else if (UCS_PTR_IS_ERR(req)) {
    delete copy;
    return PeerFailure("send to " + PeerName(peer.value) +
                       " failed: " + ucs_status_string(UCS_PTR_STATUS(req)));
  } else {
    // A message above UCX's short size leaves in fragments that only progress pushes out; drive
    // it here (bounded) rather than wait for an idle progress thread to wake. Not from inside a
    // UCX callback (an inline RPC handler answering): progress must not recurse.
    if (!t_in_callback) {
      SteadyClock clock;
      const Nanos until = clock.Now() + config_.send_spin;
      caller_progress_calls_.fetch_add(1, std::memory_order_relaxed);
      while (!copy->sent.load(std::memory_order_acquire) && clock.Now() < until) {
        ucp_worker_progress(worker_.get());
      }
    }
    copy->Release();
  }
  return Status::Ok();
}

ucs_status_t UcxTransport::OnControl(const void* header, size_t header_length, void* data,
                                     size_t length, const ucp_am_recv_param_t* param) {
  if (header_length != sizeof(ControlHeader) || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    log::Warn("dropping a malformed control message ({} header bytes)", header_length);
    return UCS_OK;
  }
  InCallback in_callback;
  ControlHeader h;
  std::memcpy(&h, header, sizeof h);
  if (!KnownSender(h.src_rank, param)) {
    log::Warn("dropping a control message that claims to come from rank {}", h.src_rank);
    return UCS_OK;
  }
  std::shared_ptr<MessageHandler> handler;
  {
    std::lock_guard<std::mutex> lock(handler_mutex_);
    handler = handler_;
  }
  if (handler && *handler) {
    (*handler)(Rank{h.src_rank},
               std::span<const std::byte>(static_cast<const std::byte*>(data), length));
  }
  return UCS_OK;
}

void UcxTransport::OnPeerError(int32_t peer, ucs_status_t status) {
  if (closing_ || shutting_down_) return;  // peers closing at shutdown is not a failure
  if (peer < 0 || peer >= slots_) return;
  {
    // A process outside the job waiting to attach to `peer`: this address did not take the
    // connection. Attach says why and the caller may try another address, so no warning here.
    std::lock_guard<std::mutex> lock(attach_wait_mutex_);
    auto it = attach_waits_.find(peer);
    if (it != attach_waits_.end() && !it->second.done) {
      it->second.done = true;
      it->second.status = ErrorCode::kPeerFailure;
      it->second.why = status;
      attach_wait_cv_.notify_all();
      return;
    }
  }
  log::Warn("endpoint to rank {} failed: {}", peer, ucs_status_string(status));
  peer_failed_[peer] = true;
  FailPeer(peer, PeerFailure(PeerName(peer) + " failed: " + ucs_status_string(status)));
  std::shared_ptr<PeerFailureHandler> handler;
  {
    std::lock_guard<std::mutex> lock(handler_mutex_);
    handler = failure_handler_;
  }
  if (handler && *handler) {
    (*handler)(Rank{peer},
               std::string("UCX reported the endpoint failed: ") + ucs_status_string(status));
  }
}

void UcxTransport::SetPeerFailureHandler(PeerFailureHandler handler) {
  std::lock_guard<std::mutex> lock(handler_mutex_);
  failure_handler_ = handler ? std::make_shared<PeerFailureHandler>(std::move(handler)) : nullptr;
}

void UcxTransport::MarkPeerDead(Rank peer, const std::string& why) {
  if (peer.value < 0 || peer.value >= slots_ || closing_) return;
  peer_declared_dead_[peer.value] = true;
  FailPeer(peer.value, PeerFailure(PeerName(peer.value) + " is dead (" + why + ")"));
}

void UcxTransport::FailPeer(int32_t peer, const Status& status) {
  std::vector<uint64_t> doomed;
  {
    std::lock_guard<std::mutex> lock(tokens_mutex_);
    for (auto& [token, op] : tokens_) {
      if (op->peer == peer) doomed.push_back(token);
    }
  }
  for (uint64_t t : doomed) CompleteToken(t, status);
}

namespace {

// Workers that cannot be destroyed (an attach still pending in them), with their contexts: held
// here so that they stay reachable (leak checkers report nothing) until the process ends.
void KeepUntilExit(ucp_worker_h worker, ucp_context_h context) {
  static std::mutex mu;
  static auto* kept = new std::vector<std::pair<ucp_worker_h, ucp_context_h>>();
  std::lock_guard<std::mutex> lock(mu);
  kept->emplace_back(worker, context);
}

}  // namespace

Status UcxTransport::Close(Nanos timeout) {
  if (closing_.exchange(true)) return Status::Ok();
  listening_ = false;
  listener_.reset();  // no more processes attach
  SteadyClock clock;
  const Nanos deadline = clock.Now() + timeout;
  Status result;
  // Flush-close every endpoint while the progress thread still runs.
  std::vector<ucs_status_ptr_t> pending;
  std::vector<char> adopted(slots_, 0);  // join slots whose endpoint the attached peer owns
  {
    std::lock_guard<std::mutex> lock(attached_mutex_);
    for (const auto& [rank, peer] : attached_) {
      if (peer->slot >= 0) adopted[peer->slot] = 1;
    }
  }
  for (int32_t r = 0; r < eps_.size(); ++r) {
    ucp_ep_h ep = eps_.Take(r);                 // closed here, with a deadline
    if (ep == nullptr || adopted[r]) continue;  // adopted ones: ReapAttached closes them
    ucp_request_param_t rp{};
    rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &rp);
    if (req != nullptr && !UCS_PTR_IS_ERR(req)) pending.push_back(req);
  }
  for (ucs_status_ptr_t req : pending) {
    while (ucp_request_check_status(req) == UCS_INPROGRESS) {
      if (clock.Now() > deadline) {
        result = Timeout("closing endpoints took longer than the deadline");
        break;
      }
      std::this_thread::yield();
    }
    ucp_request_free(req);
  }
  {
    std::lock_guard<std::mutex> lock(attached_mutex_);
    attach_check_ = nullptr;  // conn requests still queued are rejected (ucx_attach.cc)
  }
  ReapAttached(true);
  running_ = false;
  if (efd_ >= 0) ucp_worker_signal(worker_.get());  // wake a progress thread sleeping in poll
  if (progress_thread_.joinable()) progress_thread_.join();
  for (auto& table : imported_) table.reset();
  retired_holders_.clear();
  imported_.clear();
  {
    std::lock_guard<std::mutex> lock(retained_mutex_);
    retained_.clear();  // nothing progresses any more: no request can touch them
  }
  {
    std::lock_guard<std::mutex> lock(tokens_mutex_);
    tokens_.clear();
  }
  {
    std::lock_guard<std::mutex> lock(regions_mutex_);
    regions_.clear();  // unmaps every region (UcpMem), before the context goes
  }
  bool stuck = false;
  {
    std::lock_guard<std::mutex> lock(attach_wait_mutex_);
    stuck = !stuck_attaches_.empty();
  }
  if (stuck) {
    // Destroying the worker would abort the process in UCX (ucx_impl.h, FailUnansweredAttach):
    // the worker and its context stay allocated, reachable, until the process ends.
    KeepUntilExit(worker_.release(), context_.release());
    return result;
  }
  worker_.reset();  // before the context it was created from
  context_.reset();
  return result;
}

Result<std::unique_ptr<Transport>> CreateUcxTransport(const UcxConfig& config, Rank self,
                                                      int world_size) {
  auto t = std::make_unique<UcxTransport>(config, self, world_size);
  Status s = t->Init();
  if (!s.ok()) return s;
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace mooncake::transport
