// Typed request/response calls between ranks over Transport messages (the control plane).
//
// Wire frame: RpcHeader (magic, kind, type, status code, call id, payload length) then the payload;
// DecodeFrame bounds-checks it before anything reads the payload. Every Call has a deadline: a peer
// that never answers yields Timeout naming the peer and the message type, never a hang.
//
// Threading: handlers run on the Rpc's dispatcher thread, one at a time, in arrival order; they may
// block briefly and may make nested Calls (responses bypass the dispatcher). Handlers registered
// with RegisterInline instead run on the thread that received the message (one thread wake-up
// less per call); they must not block and must not make Calls. A Responder may be kept and
// answered later from any thread, exactly once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "transport/transport.h"

namespace mooncake::transport {

enum class FrameKind : uint8_t { kRequest = 1, kResponse = 2, kOneWay = 3 };

struct RpcFrame {
  FrameKind kind = FrameKind::kRequest;
  uint16_t type = 0;
  ErrorCode status = ErrorCode::kOk;  // responses only
  uint64_t call_id = 0;
  std::span<const std::byte> payload;  // view into the decoded buffer
};

inline constexpr uint32_t kMaxRpcPayload = 64u << 20;  // a peer cannot make us accept more

std::vector<std::byte> EncodeFrame(FrameKind kind, uint16_t type, ErrorCode status,
                                   uint64_t call_id, std::span<const std::byte> payload);
// Rejects truncated frames, a bad magic or kind, a payload length that disagrees with the
// buffer, and payloads over kMaxRpcPayload.
Result<RpcFrame> DecodeFrame(std::span<const std::byte> bytes);

class Rpc;

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

  // Register handlers before peers may call (before ConnectAll / the bootstrap barrier).
  void Register(uint16_t type, Handler handler);
  // Like Register, but the handler runs on the receiving thread (a transport progress thread or
  // a caller driving Progress) instead of the dispatcher. Contract: it returns quickly, takes only
  // short locks, never waits on another rank and never calls Call (that would deadlock the
  // progress engine it runs on). Handlers of several peers may run concurrently.
  void RegisterInline(uint16_t type, Handler handler);

  // Sends a request and waits for its response until `timeout`. The caller drives the
  // transport's progress for up to spin_budget() (yielding when nothing happens, so
  // oversubscribed ranks still run), then sleeps on a condition variable.
  Result<std::vector<std::byte>> Call(Rank peer, uint16_t type, std::span<const std::byte> request,
                                      Nanos timeout);
  // A message with no response.
  Status Notify(Rank peer, uint16_t type, std::span<const std::byte> payload);

  // Stops the dispatcher; pending calls fail with Timeout at their deadline.
  void Stop();

  // Membership (DESIGN.md "Failure model"): `peer` was declared dead. From now on calls and
  // messages to it fail at once with PeerFailure naming it and `why`, calls waiting on it fail
  // now, and its frames are dropped (fenced): a rank that was stopped and wakes up is not
  // obeyed; a request of it is answered PeerFailure "fenced", so it learns it was declared dead.
  // Any thread. Irreversible for this Rpc.
  void MarkDead(Rank peer, const std::string& why);
  bool IsDead(Rank peer) const;
  uint64_t fenced_frames() const { return fenced_frames_.load(); }

  uint64_t malformed_frames() const { return malformed_frames_.load(); }
  void set_spin_budget(Nanos spin) { spin_budget_ = spin; }
  Nanos spin_budget() const { return spin_budget_; }

 private:
  friend class Responder;
  struct PendingCall {
    Rank peer;
    bool done = false;
    ErrorCode status = ErrorCode::kOk;
    std::vector<std::byte> payload;
  };
  struct Incoming {
    Rank from;
    uint16_t type;
    uint64_t call_id;
    FrameKind kind;
    std::vector<std::byte> payload;
  };

  void OnMessage(Rank from, std::span<const std::byte> bytes);
  // Drops a frame of a dead rank (answering its requests "fenced"); true when it did.
  bool Fence(Rank from, const RpcFrame& frame);
  Status DeadPeer(Rank peer, uint16_t type);
  void DispatchLoop();
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
  // dead_[r] is set once rank r was declared dead; its reason under calls_mutex_.
  std::unique_ptr<std::atomic<bool>[]> dead_;
  int world_size_ = 0;
  std::unordered_map<int, std::string> dead_why_;
  std::thread dispatcher_;
};

}  // namespace mooncake::transport
