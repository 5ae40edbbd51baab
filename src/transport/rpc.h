// Typed request/response calls between ranks over Transport messages (the control plane).
//
// Wire frame: header (magic, kind, type, status code, call id, job token, payload length) then
// the payload; DecodeFrame bounds-checks it before anything reads the payload. The job token
// (docs/RELIABILITY.md): rank 0 draws 128 random bits at start and the bootstrap hands them to
// every rank; an Rpc drops, counts per peer and logs once every frame that does not carry its
// token (a process outside the job that learnt a worker address is not obeyed). Every Call has a
// deadline: a peer that never answers yields Timeout naming the peer and the message type, never a
// hang.
//
// Threading: handlers run on the Rpc's dispatcher thread, one at a time, in arrival order; they may
// block briefly and may make nested Calls (responses bypass the dispatcher). Handlers registered
// with RegisterInline instead run on the thread that received the message (one thread wake-up
// less per call); they must not block and must not make Calls. A Responder may be kept and
// answered later from any thread, exactly once.
//
// Message ids come from one table (common/message_ids.h). One id has one handler: a second
// Register for it is refused, naming the id, and the first stays. The typed spelling
// (Register<Req, Resp>, Call<Req, Resp>, Notify) encodes and decodes the wire messages
// (common/wire_fields.h), so a handler sees a decoded, validated request and a caller a decoded
// answer; the byte-level spelling stays for answers deferred or built from scratch buffers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "common/wire_fields.h"
#include "transport/transport.h"

namespace mooncake::transport {

enum class FrameKind : uint8_t { kRequest = 1, kResponse = 2, kOneWay = 3 };

// 128 random bits shared by the ranks of one job. Not a secret from anyone who can read the
// bootstrap or the wire: it keeps out processes that only know an address.
struct JobToken {
  uint64_t hi = 0;
  uint64_t lo = 0;
  bool operator==(const JobToken&) const = default;
  std::string Hex() const;
};
// 16 bytes from the kernel's random source (getrandom); never a fixed seed.
JobToken DrawJobToken();

struct RpcFrame {
  FrameKind kind = FrameKind::kRequest;
  uint16_t type = 0;
  ErrorCode status = ErrorCode::kOk;  // responses only
  uint64_t call_id = 0;
  JobToken token;
  std::span<const std::byte> payload;  // view into the decoded buffer
};

inline constexpr uint32_t kMaxRpcPayload = 64u << 20;  // a peer cannot make us accept more

std::vector<std::byte> EncodeFrame(FrameKind kind, uint16_t type, ErrorCode status,
                                   uint64_t call_id, std::span<const std::byte> payload,
                                   JobToken token = {});
// Rejects truncated frames, a bad magic or kind, a payload length that disagrees with the
// buffer, and payloads over kMaxRpcPayload. The token is returned, not checked (Rpc checks it).
Result<RpcFrame> DecodeFrame(std::span<const std::byte> bytes);
// True for a frame of the format before the job token (its magic): it carries no token.
bool FrameLacksToken(std::span<const std::byte> bytes);

class Rpc;

// A message id: an enumerator of common/message_ids.h, or a plain number (tests, tools). Every
// spelling of a call takes it, so callers pass the table's enumerators as they are.
template <typename Id>
concept MessageIdLike = std::is_integral_v<Id> ||
    (std::is_enum_v<Id> && sizeof(Id) == sizeof(uint16_t));
struct MessageId {
  template <MessageIdLike Id>
  constexpr MessageId(Id id) : value(static_cast<uint16_t>(id)) {}  // NOLINT: implicit by design
  uint16_t value = 0;
};
// "message 0x0401 (store kPutStart)", or "message 0x0007" for an id of no list.
std::string DescribeMessage(uint16_t id);

// A message type the typed calls encode and decode: it lists its fields (common/wire_fields.h).
template <typename M>
concept WireMessageType = wire_fields::HasFields<M>;

class Responder {
 public:
  Responder() = default;
  void Reply(std::span<const std::byte> payload);
  void Fail(const Status& status);
  Rank peer() const { return peer_; }

 private:
  friend class Rpc;
  Responder(Rpc* rpc, Rank peer, uint16_t type, uint64_t call_id)
      : rpc_(rpc), peer_(peer), type_(type), call_id_(call_id) {}
  Rpc* rpc_ = nullptr;
  Rank peer_;
  uint16_t type_ = 0;
  uint64_t call_id_ = 0;
};

class Rpc {
 public:
  using Handler = std::function<void(Rank from, std::span<const std::byte> request, Responder)>;

  // Installs itself as `transport`'s message handler; `transport` must outlive the Rpc.
  explicit Rpc(Transport& transport);
  ~Rpc();
  Rpc(const Rpc&) = delete;
  Rpc& operator=(const Rpc&) = delete;

  // Register handlers before peers may call (before ConnectAll / the bootstrap barrier). A type
  // that has a handler already is refused (AlreadyExists naming the id); the first one stays.
  Status Register(MessageId type, Handler handler);
  // Like Register, but the handler runs on the receiving thread (a transport progress thread or
  // a caller driving Progress) instead of the dispatcher. Contract: it returns quickly, takes only
  // short locks, never waits on another rank and never calls Call (that would deadlock the
  // progress engine it runs on). Handlers of several peers may run concurrently.
  Status RegisterInline(MessageId type, Handler handler);
  // Removes the handler of `type`, so that a component replaced on this Rpc can register its
  // successor's; true when there was one. A handler already running finishes.
  bool Unregister(MessageId type);

  // Typed handlers: the request is decoded (bounds-checked, validated) before `handler` runs; a
  // request that does not decode, one of the wrong size included, is answered ProtocolError
  // naming the message and never reaches it. `handler(Rank from, const Req&)` returns
  // Result<Resp> (an error is the caller's answer), Resp (it cannot fail), or Status where Resp
  // is EmptyMessage.
  template <WireMessageType Req, WireMessageType Resp, typename F>
  Status Register(MessageId id, F handler) {
    return Register(id, Typed<Req, Resp>(std::move(handler)));
  }
  template <WireMessageType Req, WireMessageType Resp, typename F>
  Status RegisterInline(MessageId id, F handler) {
    return RegisterInline(id, Typed<Req, Resp>(std::move(handler)));
  }

  // Sends a request and waits for its response until `timeout`. The caller drives the
  // transport's progress for up to spin_budget() (yielding when nothing happens, so
  // oversubscribed ranks still run), then sleeps on a condition variable.
  Result<std::vector<std::byte>> Call(Rank peer, MessageId type, std::span<const std::byte> request,
                                      Nanos timeout);
  // Sends a request without waiting for it. `on_reply` runs exactly once: with the response or
  // the peer's error, on the thread that received it (like an inline handler it must return
  // quickly and must not Call); with PeerFailure when the peer is or gets declared dead; with
  // the send's error on this thread; with Timeout for a call past `timeout`, found at the next
  // CallAsync (callers that call periodically, the heartbeat sender, sweep their own). A call
  // still open when the Rpc is destroyed is dropped without running `on_reply`.
  using ReplyHandler = std::function<void(Result<std::vector<std::byte>>)>;
  void CallAsync(Rank peer, MessageId type, std::span<const std::byte> request, Nanos timeout,
                 ReplyHandler on_reply);
  // A message with no response.
  Status Notify(Rank peer, MessageId type, std::span<const std::byte> payload);

  // Typed Call: sends `request` encoded and decodes the answer as Resp; an answer that does not
  // decode (of the wrong size, truncated, inconsistent) is ProtocolError naming the message.
  template <WireMessageType Req, WireMessageType Resp>
  Result<Resp> Call(Rank peer, MessageId id, const Req& request, Nanos timeout) {
    auto reply = Call(peer, id, WireEncode(request), timeout);
    if (!reply.ok()) return reply.status();
    return WireDecode<Resp>(*reply, WireNameOf<Resp>());
  }
  template <WireMessageType M>
  Status Notify(Rank peer, MessageId id, const M& message) {
    return Notify(peer, id, WireEncode(message));
  }

  // Stops the dispatcher; pending calls fail with Timeout at their deadline.
  void Stop();

  // Membership (DESIGN.md "Failure model"): `peer` was declared dead. From now on calls and
  // messages to it fail at once with PeerFailure naming it and `why`, calls waiting on it fail
  // now, and its frames are dropped (fenced): a rank that was stopped and wakes up is not
  // obeyed; a request of it is answered PeerFailure "fenced", so it learns it was declared dead.
  // Any thread. Irreversible for this Rpc. Any rank of the job as the transport counts it now
  // (a job that grows is covered) and its join slots (store ranks that joined, join_slots.h);
  // processes attached from outside the job are not fenced.
  void MarkDead(Rank peer, const std::string& why);
  bool IsDead(Rank peer) const;
  uint64_t fenced_frames() const { return fenced_frames_.load(); }

  uint64_t malformed_frames() const { return malformed_frames_.load(); }

  // The job's token: frames are sent with it, and a frame with another or none is dropped before
  // any handler runs, counted for its sender and logged once per sender. Set it before any
  // traffic (the bootstrap does, before ConnectAll); the default (all zero) is what tests and
  // tools without a job use on both sides.
  void SetJobToken(JobToken token);
  JobToken job_token() const { return {token_hi_.load(), token_lo_.load()}; }
  uint64_t refused_frames() const { return refused_frames_.load(); }
  // Refused frames by the rank their transport header claimed (a foreign process claims one).
  uint64_t refused_frames_from(Rank peer) const;
  void set_spin_budget(Nanos spin) { spin_budget_ = spin; }
  Nanos spin_budget() const { return spin_budget_; }

 private:
  friend class Responder;
  struct PendingCall {
    Rank peer;
    bool done = false;
    ErrorCode status = ErrorCode::kOk;
    std::vector<std::byte> payload;
    ReplyHandler on_reply;  // CallAsync's; empty for Call
    uint16_t type = 0;
    Nanos timeout{0}, deadline{0};  // CallAsync's
  };
  struct Incoming {
    Rank from;
    uint16_t type;
    uint64_t call_id;
    FrameKind kind;
    std::vector<std::byte> payload;
  };

  Status Install(uint16_t type, Handler handler, bool run_inline);
  // The byte-level handler that decodes Req, runs `handler` and encodes its answer.
  template <typename Req, typename Resp, typename F>
  static Handler Typed(F handler) {
    return [handler = std::move(handler)](Rank from, std::span<const std::byte> bytes,
                                          Responder responder) mutable {
      auto request = WireDecode<Req>(bytes, WireNameOf<Req>());
      if (!request.ok()) return responder.Fail(request.status());
      auto answer = handler(from, std::as_const(*request));
      if constexpr (std::is_same_v<decltype(answer), Resp>) {
        responder.Reply(WireEncode(answer));  // an answer that cannot fail
      } else if constexpr (std::is_same_v<decltype(answer), Status>) {
        static_assert(std::is_same_v<Resp, EmptyMessage>,
                      "a typed handler that returns Status answers EmptyMessage");
        if (!answer.ok()) return responder.Fail(answer);
        responder.Reply({});
      } else {
        if (!answer.ok()) return responder.Fail(answer.status());
        responder.Reply(WireEncode(*answer));
      }
    };
  }
  void OnMessage(Rank from, std::span<const std::byte> bytes);
  // Drops a frame of a dead rank (answering its requests "fenced"); true when it did.
  bool Fence(Rank from, const RpcFrame& frame);
  // Counts and (once per sender) logs a frame without the job's token.
  void Refuse(Rank from, const char* why);
  Status DeadPeer(Rank peer, uint16_t type);
  void DispatchLoop();
  // The caller's view of a finished call: its payload, or its error naming the peer.
  static Result<std::vector<std::byte>> Outcome(PendingCall& call);
  // Fails the CallAsync calls past their deadline with Timeout.
  void ExpireAsyncCalls();
  void SendResponse(Rank peer, uint16_t type, uint64_t call_id, ErrorCode status,
                    std::span<const std::byte> payload);

  Transport& transport_;
  struct Entry {
    Handler handler;
    bool run_inline = false;
  };
  std::mutex handlers_mutex_;
  std::unordered_map<uint16_t, Entry> handlers_;
  Nanos spin_budget_ = Nanos(1'000'000);

  std::mutex calls_mutex_;
  std::condition_variable calls_cv_;
  uint64_t next_call_id_ = 1;
  std::unordered_map<uint64_t, std::shared_ptr<PendingCall>> calls_;

  std::mutex inbox_mutex_;
  std::condition_variable inbox_cv_;
  std::deque<Incoming> inbox_;
  bool stopping_ = false;
  std::atomic<uint64_t> malformed_frames_{0};
  std::atomic<uint64_t> fenced_frames_{0};
  std::atomic<uint64_t> token_hi_{0}, token_lo_{0};
  std::atomic<uint64_t> refused_frames_{0};
  // Peers are held by rank in maps, not in arrays sized by the job at start: a job whose ranks
  // come and go keeps its counts and fences. Refusals are rare; a rank outside the job (an
  // attached process, or a forged number) shares refused_unknown_, so the map stays bounded.
  mutable std::mutex refused_mutex_;
  std::unordered_map<int, uint64_t> refused_by_peer_;
  std::atomic<uint64_t> refused_unknown_{0};
  // The ranks declared dead and why. IsDead runs on every frame: while nobody died (the common
  // case) dead_count_ answers it without a lock.
  mutable std::shared_mutex dead_mutex_;
  std::unordered_map<int, std::string> dead_why_;
  std::atomic<size_t> dead_count_{0};
  std::thread dispatcher_;
};

// For wiring with no caller to hand a refused registration to (a constructor, a role's Start):
// a second handler for one id is a bug of the wiring, found at start, so it stops the process
// with the refusal, naming the id (as reading a Result's missing value does).
void CheckRegistered(const Status& registered);

}  // namespace mooncake::transport
