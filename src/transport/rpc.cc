#include "transport/rpc.h"

#include <algorithm>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "common/log.h"
#include "common/message_ids.h"
#include "common/secret.h"
#include "common/threads.h"
#include "common/wire.h"
#include "transport/join_slots.h"

namespace mooncake::transport {
namespace {

constexpr uint16_t kFrameMagic = 0x4d54;           // "MT": frames with a job token
constexpr uint16_t kTokenlessFrameMagic = 0x4d52;  // "MR": the format before the token
constexpr size_t kHeaderSize = 2 + 1 + 2 + 2 + 8 + 16 + 4;

std::string FormatMs(Nanos d) { return std::to_string(d.count() / 1'000'000) + " ms"; }

std::span<const std::byte> AsBytes(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

}  // namespace

std::string JobToken::Hex() const { return fmt::format("{:016x}{:016x}", hi, lo); }

JobToken DrawJobToken() { return JobToken{RandomWord(), RandomWord()}; }

std::vector<std::byte> EncodeFrame(FrameKind kind, uint16_t type, ErrorCode status,
                                   uint64_t call_id, std::span<const std::byte> payload,
                                   JobToken token) {
  WireWriter w;
  w.Put<uint16_t>(kFrameMagic);
  w.Put<uint8_t>(static_cast<uint8_t>(kind));
  w.Put<uint16_t>(type);
  w.Put<uint16_t>(static_cast<uint16_t>(status));
  w.Put<uint64_t>(call_id);
  w.Put<uint64_t>(token.hi);
  w.Put<uint64_t>(token.lo);
  w.PutBytes(payload);
  return w.Take();
}

bool FrameLacksToken(std::span<const std::byte> bytes) {
  if (bytes.size() < 2) return false;
  uint16_t magic = 0;
  WireReader(bytes).Get(&magic);
  return magic == kTokenlessFrameMagic;
}

Result<RpcFrame> DecodeFrame(std::span<const std::byte> bytes) {
  if (bytes.size() < kHeaderSize) {
    return ProtocolError("rpc frame truncated: " + std::to_string(bytes.size()) +
                         " bytes, header is " + std::to_string(kHeaderSize));
  }
  WireReader r(bytes);
  uint16_t magic = 0, type = 0, status = 0;
  uint8_t kind = 0;
  RpcFrame f;
  r.Get(&magic);
  r.Get(&kind);
  r.Get(&type);
  r.Get(&status);
  r.Get(&f.call_id);
  r.Get(&f.token.hi);
  r.Get(&f.token.lo);
  if (magic != kFrameMagic) return ProtocolError("rpc frame has a bad magic");
  if (kind < 1 || kind > 3)
    return ProtocolError("rpc frame has unknown kind " + std::to_string(kind));
  if (!r.GetBytes(&f.payload, kMaxRpcPayload)) {
    return ProtocolError("rpc frame payload length disagrees with the frame size (" +
                         std::to_string(bytes.size()) + " bytes) or exceeds the limit");
  }
  if (!r.done()) return ProtocolError("rpc frame has trailing bytes");
  f.kind = static_cast<FrameKind>(kind);
  f.type = type;
  f.status = static_cast<ErrorCode>(status);
  return f;
}

void Responder::Reply(std::span<const std::byte> payload) {
  if (rpc_ == nullptr) return;
  rpc_->SendResponse(peer_, type_, call_id_, ErrorCode::kOk, payload);
  rpc_ = nullptr;
}

void Responder::Fail(const Status& status) {
  if (rpc_ == nullptr) return;
  rpc_->SendResponse(peer_, type_, call_id_, status.code(), AsBytes(status.message()));
  rpc_ = nullptr;
}

Rpc::Rpc(Transport& transport) : transport_(transport) {
  transport_.SetMessageHandler(
      [this](Rank from, std::span<const std::byte> bytes) { OnMessage(from, bytes); });
  dispatcher_ = std::thread([this] { DispatchLoop(); });
}

Rpc::~Rpc() {
  Stop();
  transport_.SetMessageHandler(nullptr);
}

void Rpc::Stop() {
  if (!RaiseFlag(inbox_mutex_, stopping_, inbox_cv_)) return;
  JoinAll(dispatcher_);
}

Status Rpc::Register(MessageId type, Handler handler) {
  return Install(type.value, std::move(handler), false);
}

Status Rpc::RegisterInline(MessageId type, Handler handler) {
  return Install(type.value, std::move(handler), true);
}

bool Rpc::Unregister(MessageId type) {
  std::lock_guard<std::mutex> lock(handlers_mutex_);
  return handlers_.erase(type.value) != 0;
}

Status Rpc::Install(uint16_t type, Handler handler, bool run_inline) {
  std::lock_guard<std::mutex> lock(handlers_mutex_);
  if (!handlers_.try_emplace(type, Entry{std::move(handler), run_inline}).second) {
    return Status(ErrorCode::kAlreadyExists,
                  fmt::format("rank {}: {} has a handler already; a second one is refused",
                              transport_.self().value, DescribeMessage(type)));
  }
  return Status::Ok();
}

std::string DescribeMessage(uint16_t id) {
  const MessageLookup found = LookupMessage(id);
  if (found.name.empty()) return fmt::format("message {:#06x}", id);
  return fmt::format("message {:#06x} ({} {})", id, found.component, found.name);
}

void CheckRegistered(const Status& registered) {
  if (registered.ok()) return;
  log::Error("{}", registered.ToString());
  std::abort();  // a wiring bug: two parts of this rank claim one message
}

void Rpc::SetJobToken(JobToken token) {
  token_hi_ = token.hi;
  token_lo_ = token.lo;
}

uint64_t Rpc::refused_frames_from(Rank peer) const {
  std::lock_guard<std::mutex> lock(refused_mutex_);
  auto it = refused_by_peer_.find(peer.value);
  return it == refused_by_peer_.end() ? 0 : it->second;
}

void Rpc::Refuse(Rank from, const char* why) {
  refused_frames_.fetch_add(1);
  const bool known = from.value >= 0 && from.value < transport_.world_size();
  // Once per sender, not per frame: a flood must not become a flood of log lines. Senders
  // outside the job's ranks (attached processes) share one count.
  uint64_t before = 0;
  if (known) {
    std::lock_guard<std::mutex> lock(refused_mutex_);
    before = refused_by_peer_[from.value]++;
  } else {
    before = refused_unknown_.fetch_add(1);
  }
  if (before != 0) return;
  log::Warn(
      "refusing rpc frames that claim to come from rank {}: {} (further ones are counted, "
      "not logged)",
      from.value, why);
}

void Rpc::OnMessage(Rank from, std::span<const std::byte> bytes) {
  if (FrameLacksToken(bytes)) return Refuse(from, "no job token");
  auto frame = DecodeFrame(bytes);
  if (!frame.ok()) {
    malformed_frames_.fetch_add(1);
    log::Warn("dropping message from rank {}: {}", from.value, frame.status().ToString());
    return;
  }
  const JobToken mine = job_token();
  if (!SecretEquals(frame->token.hi, frame->token.lo, mine.hi, mine.lo)) {
    return Refuse(from, "wrong job token");
  }
  if (Fence(from, *frame)) return;
  if (frame->kind == FrameKind::kResponse) {
    std::shared_ptr<PendingCall> async;
    {
      std::lock_guard<std::mutex> lock(calls_mutex_);
      auto it = calls_.find(frame->call_id);
      if (it == calls_.end()) return;  // the caller gave up (deadline passed); drop late answers
      it->second->done = true;
      it->second->status = frame->status;
      it->second->payload.assign(frame->payload.begin(), frame->payload.end());
      if (it->second->on_reply) {
        async = std::move(it->second);
        calls_.erase(it);
      }
      calls_cv_.notify_all();
    }
    if (async) async->on_reply(Outcome(*async));
    return;
  }
  Handler inline_handler;
  {
    std::lock_guard<std::mutex> lock(handlers_mutex_);
    auto it = handlers_.find(frame->type);
    if (it != handlers_.end() && it->second.run_inline) inline_handler = it->second.handler;
  }
  if (inline_handler) {
    Responder responder = frame->kind == FrameKind::kRequest
                              ? Responder(this, from, frame->type, frame->call_id)
                              : Responder();
    inline_handler(from, frame->payload, responder);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    inbox_.push_back(
        Incoming{from, frame->type, frame->call_id, frame->kind,
                 std::vector<std::byte>(frame->payload.begin(), frame->payload.end())});
  }
  inbox_cv_.notify_one();
}

void Rpc::DispatchLoop() {
  for (;;) {
    Incoming msg;
    {
      std::unique_lock<std::mutex> lock(inbox_mutex_);
      inbox_cv_.wait(lock, [this] { return stopping_ || !inbox_.empty(); });
      if (stopping_) return;
      msg = std::move(inbox_.front());
      inbox_.pop_front();
    }
    Handler handler;
    {
      std::lock_guard<std::mutex> lock(handlers_mutex_);
      auto it = handlers_.find(msg.type);
      if (it != handlers_.end()) handler = it->second.handler;
    }
    Responder responder = msg.kind == FrameKind::kRequest
                              ? Responder(this, msg.from, msg.type, msg.call_id)
                              : Responder();
    if (!handler) {
      responder.Fail(NotSupported("rank " + std::to_string(transport_.self().value) +
                                  " has no handler for message type " + std::to_string(msg.type)));
      continue;
    }
    handler(msg.from, msg.payload, responder);
  }
}

void Rpc::SendResponse(Rank peer, uint16_t type, uint64_t call_id, ErrorCode status,
                       std::span<const std::byte> payload) {
  auto frame = EncodeFrame(FrameKind::kResponse, type, status, call_id, payload, job_token());
  Status s = transport_.SendMessage(peer, frame);
  if (!s.ok()) log::Warn("response to rank {} lost: {}", peer.value, s.ToString());
}

bool Rpc::IsDead(Rank peer) const {
  if (dead_count_.load(std::memory_order_acquire) == 0) return false;
  std::shared_lock<std::shared_mutex> lock(dead_mutex_);
  return dead_why_.count(peer.value) != 0;
}

void Rpc::MarkDead(Rank peer, const std::string& why) {
  // Processes attached from outside the job come and go; they are not fenced. Store ranks
  // that joined the job (join slots, join_slots.h) are members like the job's own ranks.
  if (peer.value < 0 || peer.value >= transport_.world_size() + kMaxJoinedRanks) return;
  {
    std::unique_lock<std::shared_mutex> lock(dead_mutex_);
    dead_why_[peer.value] = why;
    dead_count_.store(dead_why_.size(), std::memory_order_release);
  }
  std::vector<std::shared_ptr<PendingCall>> async;
  {
    std::lock_guard<std::mutex> lock(calls_mutex_);
    const std::string msg = "declared dead (" + why + ")";
    for (auto it = calls_.begin(); it != calls_.end();) {
      PendingCall& call = *it->second;
      if (call.peer.value != peer.value || call.done) {
        ++it;
        continue;
      }
      call.done = true;
      call.status = ErrorCode::kPeerFailure;
      call.payload.assign(reinterpret_cast<const std::byte*>(msg.data()),
                          reinterpret_cast<const std::byte*>(msg.data()) + msg.size());
      if (call.on_reply) {
        async.push_back(std::move(it->second));
        it = calls_.erase(it);
      } else {
        ++it;
      }
    }
  }
  calls_cv_.notify_all();
  for (auto& call : async) call->on_reply(Outcome(*call));
  transport_.MarkPeerDead(peer, why);  // transfers to it fail fast too
}

Status Rpc::DeadPeer(Rank peer, uint16_t type) {
  std::shared_lock<std::shared_mutex> lock(dead_mutex_);
  auto it = dead_why_.find(peer.value);
  const std::string why = it == dead_why_.end() ? "" : it->second;
  return PeerFailure("rank " + std::to_string(peer.value) + " is dead (" + why + "): rpc type " +
                     std::to_string(type) + " not sent");
}

bool Rpc::Fence(Rank from, const RpcFrame& frame) {
  if (!IsDead(from)) return false;
  if (fenced_frames_.fetch_add(1) == 0) {
    log::Warn("dropping messages of rank {}: it was declared dead (fenced)", from.value);
  }
  if (frame.kind == FrameKind::kRequest) {
    std::string why;
    {
      std::shared_lock<std::shared_mutex> lock(dead_mutex_);
      auto it = dead_why_.find(from.value);
      if (it != dead_why_.end()) why = " (" + it->second + ")";
    }
    const std::string msg = "rank " + std::to_string(transport_.self().value) + " fenced rank " +
                            std::to_string(from.value) + ": it was declared dead" + why;
    auto reply = EncodeFrame(FrameKind::kResponse, frame.type, ErrorCode::kPeerFailure,
                             frame.call_id, AsBytes(msg), job_token());
    (void)transport_.SendMessage(from, reply);
  }
  return true;
}

Result<std::vector<std::byte>> Rpc::Call(Rank peer, MessageId message,
                                         std::span<const std::byte> request, Nanos timeout) {
  const uint16_t type = message.value;
  if (IsDead(peer)) return DeadPeer(peer, type);
  auto pending = std::make_shared<PendingCall>();
  pending->peer = peer;
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(calls_mutex_);
    id = next_call_id_++;
    calls_[id] = pending;
  }
  auto erase = [&] {
    std::lock_guard<std::mutex> lock(calls_mutex_);
    calls_.erase(id);
  };
  Status sent = transport_.SendMessage(
      peer, EncodeFrame(FrameKind::kRequest, type, ErrorCode::kOk, id, request, job_token()));
  if (!sent.ok()) {
    erase();
    return sent.WithContext("rpc type " + std::to_string(type) + " to rank " +
                            std::to_string(peer.value));
  }
  SteadyClock clock;
  const Nanos deadline = clock.Now() + timeout;
  // Drive the backend's progress ourselves for a while: the response is then handled on this
  // thread, with no wake-up of a sleeping progress thread and no condition-variable hand-off
  // (each can cost a scheduler slice on a loaded machine). Yield when nothing happens so an
  // oversubscribed rank leaves the core to the peer we wait on; after the budget, block on the
  // condition variable in short slices (the transport's own thread then delivers).
  const Nanos spin_until =
      clock.Now() + (transport_.CallerProgressHelps() ? std::min(spin_budget_, timeout) : Nanos(0));
  uint32_t idle_rounds = 0;
  // Held while this thread spins on Progress(), released before it sleeps on the condition.
  CallerProgressScope driving(clock.Now() < spin_until ? &transport_ : nullptr);
  std::unique_lock<std::mutex> lock(calls_mutex_);
  while (!pending->done) {
    Nanos now = clock.Now();
    if (now >= deadline) {
      calls_.erase(id);
      return Timeout("rank " + std::to_string(peer.value) + " did not answer rpc type " +
                     std::to_string(type) + " within " + FormatMs(timeout));
    }
    if (now < spin_until) {
      lock.unlock();
      if (transport_.Progress()) {
        idle_rounds = 0;
      } else if (++idle_rounds > 16) {
        std::this_thread::yield();
      }
      lock.lock();
    } else {
      driving.Release();
      Nanos slice = std::min<Nanos>(deadline - now, Nanos(1'000'000));
      calls_cv_.wait_for(lock, slice);
    }
  }
  calls_.erase(id);
  return Outcome(*pending);
}

Result<std::vector<std::byte>> Rpc::Outcome(PendingCall& call) {
  if (call.status != ErrorCode::kOk) {
    std::string msg(reinterpret_cast<const char*>(call.payload.data()), call.payload.size());
    return Status(call.status, "rank " + std::to_string(call.peer.value) + ": " + msg);
  }
  return std::move(call.payload);
}

void Rpc::ExpireAsyncCalls() {
  const Nanos now = SteadyClock().Now();
  std::vector<std::shared_ptr<PendingCall>> expired;
  {
    std::lock_guard<std::mutex> lock(calls_mutex_);
    for (auto it = calls_.begin(); it != calls_.end();) {
      if (it->second->on_reply && it->second->deadline <= now) {
        expired.push_back(std::move(it->second));
        it = calls_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& call : expired) {
    call->on_reply(Timeout("rank " + std::to_string(call->peer.value) +
                           " did not answer rpc type " + std::to_string(call->type) + " within " +
                           FormatMs(call->timeout)));
  }
}

void Rpc::CallAsync(Rank peer, MessageId message, std::span<const std::byte> request, Nanos timeout,
                    ReplyHandler on_reply) {
  const uint16_t type = message.value;
  ExpireAsyncCalls();
  if (IsDead(peer)) return on_reply(DeadPeer(peer, type));
  auto pending = std::make_shared<PendingCall>();
  pending->peer = peer;
  pending->type = type;
  pending->timeout = timeout;
  pending->deadline = SteadyClock().Now() + timeout;
  pending->on_reply = std::move(on_reply);
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(calls_mutex_);
    id = next_call_id_++;
    calls_[id] = pending;
  }
  Status sent = transport_.SendMessage(
      peer, EncodeFrame(FrameKind::kRequest, type, ErrorCode::kOk, id, request, job_token()));
  if (sent.ok()) return;
  {
    std::lock_guard<std::mutex> lock(calls_mutex_);
    if (calls_.erase(id) == 0) return;  // MarkDead answered it meanwhile
  }
  pending->on_reply(sent.WithContext("rpc type " + std::to_string(type) + " to rank " +
                                     std::to_string(peer.value)));
}

Status Rpc::Notify(Rank peer, MessageId message, std::span<const std::byte> payload) {
  const uint16_t type = message.value;
  if (IsDead(peer)) return DeadPeer(peer, type);
  return transport_.SendMessage(
      peer, EncodeFrame(FrameKind::kOneWay, type, ErrorCode::kOk, 0, payload, job_token()));
}

}  // namespace mooncake::transport
