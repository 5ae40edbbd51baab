#include "cluster/rendezvous_bootstrap.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "cluster/rendezvous_frames.h"
#include "common/log.h"
#include "common/secret.h"
#include "common/wire.h"

namespace mooncake::cluster {

using rendezvous::Deadline;
using rendezvous::Frame;
using rendezvous::FrameKind;

namespace {

constexpr uint32_t kVersion = 1;
constexpr Nanos kAbortSendTimeout = std::chrono::seconds(1);

Deadline DeadlineAfter(Nanos timeout) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
}

std::vector<std::byte> EncodeHello(const RendezvousConfig& c) {
  WireWriter w;
  w.Put<uint32_t>(kVersion);
  w.Put<int32_t>(c.size);
  w.PutString(c.hostname);
  w.PutBytes(c.credential);
  return w.Take();
}

std::vector<std::byte> EncodeRanks(const std::vector<int>& ranks) {
  WireWriter w;
  w.Put<uint32_t>(static_cast<uint32_t>(ranks.size()));
  for (int r : ranks) w.Put<int32_t>(r);
  return w.Take();
}

std::vector<int> DecodeRanks(std::span<const std::byte> payload) {
  WireReader r(payload);
  uint32_t n = 0;
  std::vector<int> ranks;
  if (!r.Get(&n) || n > r.remaining() / 4) return ranks;
  for (uint32_t i = 0; i < n; ++i) {
    int32_t rank = 0;
    r.Get(&rank);
    ranks.push_back(rank);
  }
  return ranks;
}

std::vector<std::byte> TextPayload(std::string_view text) {
  auto b = std::as_bytes(std::span(text.data(), text.size()));
  return {b.begin(), b.end()};
}

[[noreturn]] void EndProcess(int code) {
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace

// One connection at the root: a rank once its hello was accepted (rank >= 1), before that an
// unadmitted peer that may send nothing but a hello.
struct RootConnection {
  int fd = -1;
  int rank = -1;
  Deadline hello_deadline;
  std::vector<std::byte> in;
  std::map<uint32_t, std::vector<std::byte>> contributions;  // by step number
};

class RendezvousState {
 public:
  RendezvousState(const RendezvousConfig& config, int fd) : config_(config), fd_(fd) {}
  ~RendezvousState() { Close(); }

  Result<Records> Step(std::span<const std::byte> mine, bool all_gather, int gather_root,
                       std::string_view step, Nanos timeout) {
    const uint32_t number = steps_++;
    missing_.clear();
    if (left_) return Internal(fmt::format("step '{}' after the bootstrap was left", step));
    return config_.rank == 0 ? RootStep(number, mine, all_gather, gather_root, step, timeout)
                             : RankStep(number, mine, all_gather, gather_root, step, timeout);
  }

  [[noreturn]] void Abort(int code) {
    if (!left_) {
      const auto frame = rendezvous::EncodeFrame(
          {FrameKind::kAbort, steps_, config_.rank, TextPayload(std::to_string(code))});
      const auto deadline = DeadlineAfter(kAbortSendTimeout);
      if (config_.rank == 0) {
        for (auto& c : conns_) {
          if (c.rank > 0) (void)rendezvous::SendAll(c.fd, frame, deadline);
        }
      } else {
        (void)rendezvous::SendAll(fd_, frame, deadline);
      }
    }
    EndProcess(code);
  }

  void Close() {
    left_ = true;
    for (auto& c : conns_) close(c.fd);
    conns_.clear();
    if (fd_ >= 0) {
      shutdown(fd_, SHUT_WR);
      close(fd_);
    }
    fd_ = -1;
  }

  std::vector<int> missing_;

 private:
  // Rank 0: waits for every other rank's contribution to step `number`, then answers.
  Result<Records> RootStep(uint32_t number, std::span<const std::byte> mine, bool all_gather,
                           int gather_root, std::string_view step, Nanos timeout) {
    const int n = config_.size;
    const auto deadline = DeadlineAfter(timeout);
    Records records(n);
    std::vector<bool> arrived(n, false);
    records[0].assign(mine.begin(), mine.end());
    arrived[0] = true;
    int count = 1;
    for (;;) {
      for (auto& c : conns_) {
        auto it = c.contributions.find(number);
        if (c.rank <= 0 || it == c.contributions.end()) continue;
        records[c.rank] = std::move(it->second);
        c.contributions.erase(it);
        if (!arrived[c.rank]) ++count;
        arrived[c.rank] = true;
      }
      if (count == n || std::chrono::steady_clock::now() >= deadline) break;
      PollRoot(deadline);
    }
    const bool barrier = !all_gather && gather_root < 0;
    if (count < n) {
      for (int r = 0; r < n; ++r) {
        if (!arrived[r]) missing_.push_back(r);
      }
      // The ranks that wait for an answer hear the step failed, instead of running into their
      // own deadline later.
      Reply(number, FrameKind::kStepFailed, EncodeRanks(missing_),
            [&](int r) { return arrived[r] && (all_gather || barrier || r == gather_root); });
      return StepTimeout(step, timeout, 0, 0, missing_);
    }
    if (all_gather) {
      Reply(number, FrameKind::kRecords, rendezvous::EncodeRecords(records),
            [](int) { return true; });
      return records;
    }
    if (barrier) {
      Reply(number, FrameKind::kStepDone, {}, [](int) { return true; });
      return Records{};
    }
    if (gather_root == 0) return records;
    Reply(number, FrameKind::kRecords, rendezvous::EncodeRecords(records),
          [&](int r) { return r == gather_root; });
    return Records{};
  }

  template <typename Want>
  void Reply(uint32_t number, FrameKind kind, std::vector<std::byte> payload, Want want) {
    const auto frame = rendezvous::EncodeFrame({kind, number, 0, std::move(payload)});
    const auto deadline = DeadlineAfter(config_.connect_timeout);
    for (auto& c : conns_) {
      if (c.rank <= 0 || !want(c.rank)) continue;
      if (auto s = rendezvous::SendAll(c.fd, frame, deadline); !s.ok()) {
        log::Warn("rendezvous: rank {} did not take the answer to step {}: {}", c.rank, number,
                  s.ToString());
      }
    }
  }

  // Accepts connections and reads what arrived, for at most 100 ms or until `deadline`.
  void PollRoot(Deadline deadline) {
    std::vector<pollfd> fds{{fd_, POLLIN, 0}};
    for (auto& c : conns_) fds.push_back({c.fd, POLLIN, 0});
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    poll(fds.data(), fds.size(), static_cast<int>(std::clamp<int64_t>(left.count(), 0, 100)));
    if (fds[0].revents & POLLIN) Accept();
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = 1; i < fds.size(); ++i) {
      auto& c = conns_[i - 1];
      if (c.rank < 0 && now >= c.hello_deadline) {
        DropConnection(c, "sent no hello in time");
      } else if (fds[i].revents != 0) {
        ReadConnection(c);
      }
    }
    std::erase_if(conns_, [](const RootConnection& c) { return c.fd < 0; });
  }

  void Accept() {
    for (;;) {
      const int fd = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      conns_.push_back({fd, -1, DeadlineAfter(config_.connect_timeout), {}, {}});
    }
  }

  void ReadConnection(RootConnection& c) {
    const Status read = rendezvous::ReadAvailable(c.fd, &c.in);
    for (;;) {
      Status error;
      auto frame = rendezvous::TakeFrame(&c.in, &error);
      if (!error.ok()) return DropConnection(c, error.message());
      if (!frame) break;
      if (!Handle(c, std::move(*frame))) return;
    }
    if (!read.ok()) {
      if (c.rank > 0) log::Warn("rendezvous: rank {} left: {}", c.rank, read.message());
      DropConnection(c, "");
    }
  }

  // False when the connection was dropped.
  bool Handle(RootConnection& c, Frame frame) {
    if (c.rank < 0) {
      if (frame.kind != FrameKind::kHello) {
        DropConnection(c, "sent a frame before its hello");
        return false;
      }
      return Admit(c, frame);
    }
    if (frame.kind == FrameKind::kAbort) {
      log::Error(
          "rendezvous: rank {} ended the job (exit code {})", c.rank,
          std::string(reinterpret_cast<const char*>(frame.payload.data()), frame.payload.size()));
      Abort(std::atoi(
          std::string(reinterpret_cast<const char*>(frame.payload.data()), frame.payload.size())
              .c_str()));
    }
    if (frame.kind != FrameKind::kContribute || frame.rank != c.rank ||
        c.contributions.contains(frame.step)) {
      DropConnection(c, fmt::format("rank {} sent an unexpected frame", c.rank));
      return false;
    }
    c.contributions[frame.step] = std::move(frame.payload);
    return true;
  }

  bool Admit(RootConnection& c, const Frame& hello) {
    WireReader r(hello.payload);
    uint32_t version = 0;
    int32_t size = 0;
    std::string host;
    std::span<const std::byte> credential;
    r.Get(&version);
    r.Get(&size);
    r.GetString(&host, 1024);
    r.GetBytes(&credential, 4096);
    std::string refusal;
    if (!r.done()) {
      refusal = "a malformed hello";
    } else if (version != kVersion) {
      refusal = fmt::format("rendezvous version {}, the root speaks {}", version, kVersion);
    } else if (!SecretEquals(credential, config_.credential)) {
      refusal = "a wrong job credential";
    } else if (size != config_.size) {
      refusal = fmt::format("a job of {} ranks; the root's job has {}", size, config_.size);
    } else if (hello.rank < 1 || hello.rank >= config_.size) {
      refusal = fmt::format("rank {}, outside 1..{}", hello.rank, config_.size - 1);
    } else if (std::any_of(conns_.begin(), conns_.end(),
                           [&](const RootConnection& o) { return o.rank == hello.rank; })) {
      refusal = fmt::format("rank {}, which another process already holds", hello.rank);
    }
    if (refusal.empty()) {
      c.rank = hello.rank;
      return true;
    }
    const std::string why = fmt::format(
        "rank 0 refused a process claiming rank {} from host "
        "'{}': {}",
        hello.rank, host, refusal);
    log::Warn("rendezvous: {}", why);
    (void)rendezvous::SendAll(
        c.fd, rendezvous::EncodeFrame({FrameKind::kRefused, 0, 0, TextPayload(why)}),
        DeadlineAfter(kAbortSendTimeout));
    DropConnection(c, "");
    return false;
  }

  void DropConnection(RootConnection& c, std::string_view why) {
    if (!why.empty()) log::Warn("rendezvous: dropped a connection: {}", why);
    if (c.fd >= 0) close(c.fd);
    c.fd = -1;
    c.rank = -1;
  }

  // A rank other than 0: sends its contribution and, when the step answers it, waits.
  Result<Records> RankStep(uint32_t number, std::span<const std::byte> mine, bool all_gather,
                           int gather_root, std::string_view step, Nanos timeout) {
    const auto deadline = DeadlineAfter(timeout);
    const auto frame = rendezvous::EncodeFrame(
        {FrameKind::kContribute, number, config_.rank, {mine.begin(), mine.end()}});
    Status sent = rendezvous::SendAll(fd_, frame, deadline);
    const bool barrier = !all_gather && gather_root < 0;
    const bool answered = all_gather || barrier || gather_root == config_.rank;
    if (sent.ok() && !answered) return Records{};
    const int root = barrier || all_gather ? 0 : gather_root;
    for (;;) {
      auto got = rendezvous::ReadFrame(fd_, &in_, deadline);
      if (!got.ok()) {
        if (got.status().code() == ErrorCode::kTimeout) {
          return StepTimeout(step, timeout, config_.rank, root, {});
        }
        return got.status().WithContext(
            fmt::format("step '{}' (rank 0 at {}:{})", step, config_.root_host, config_.root_port));
      }
      const std::string text(reinterpret_cast<const char*>(got->payload.data()),
                             got->payload.size());
      switch (got->kind) {
        case FrameKind::kRefused:
          return PermissionDenied(text);
        case FrameKind::kAbort:
          log::Error("rendezvous: rank 0 ended the job (exit code {})", text);
          EndProcess(std::atoi(text.c_str()));
        case FrameKind::kStepFailed:
          if (got->step != number) break;
          if (root == config_.rank) missing_ = DecodeRanks(got->payload);
          return StepTimeout(step, timeout, config_.rank, root, missing_);
        case FrameKind::kRecords:
          if (got->step != number) break;
          return rendezvous::DecodeRecords(got->payload);
        case FrameKind::kStepDone:
          if (got->step == number) return Records{};
          break;
        default:
          break;
      }
      return ProtocolError(
          fmt::format("step '{}': rank 0 sent an unexpected frame (kind {}, "
                      "step {})",
                      step, static_cast<int>(got->kind), got->step));
    }
  }

  const RendezvousConfig& config_;
  int fd_;  // rank 0: the listening socket; other ranks: the connection to rank 0
  std::vector<RootConnection> conns_;
  std::vector<std::byte> in_;
  uint32_t steps_ = 0;
  bool left_ = false;
};

Result<std::unique_ptr<RendezvousBootstrap>> RendezvousBootstrap::Create(
    const RendezvousConfig& given) {
  RendezvousConfig config = given;
  if (config.size < 1 || config.rank < 0 || config.rank >= config.size) {
    return InvalidArgument(
        fmt::format("rendezvous: rank {} of a job of {} ranks", config.rank, config.size));
  }
  if (config.hostname.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    config.hostname = host;
  }
  uint16_t port = 0;
  int fd = -1;
  if (config.rank == 0) {
    auto listening = rendezvous::ListenTcp(config.bind_address, config.root_port, &port);
    if (!listening.ok()) return listening.status();
    fd = *listening;
  } else {
    auto connected = rendezvous::ConnectTcp(config.root_host, config.root_port,
                                            DeadlineAfter(config.connect_timeout));
    if (!connected.ok()) {
      return connected.status().WithContext(fmt::format("rank {}", config.rank));
    }
    fd = *connected;
    const auto hello =
        rendezvous::EncodeFrame({FrameKind::kHello, 0, config.rank, EncodeHello(config)});
    if (auto s = rendezvous::SendAll(fd, hello, DeadlineAfter(config.connect_timeout)); !s.ok()) {
      close(fd);
      return s.WithContext(fmt::format("rank {}: hello to rank 0", config.rank));
    }
  }
  return std::unique_ptr<RendezvousBootstrap>(new RendezvousBootstrap(std::move(config), fd, port));
}

RendezvousBootstrap::RendezvousBootstrap(RendezvousConfig config, int fd, uint16_t port)
    : config_(std::move(config)),
      state_(std::make_unique<RendezvousState>(config_, fd)),  // reads config_, set above
      port_(port) {}

RendezvousBootstrap::~RendezvousBootstrap() = default;

Result<Records> RendezvousBootstrap::DoAllGather(std::span<const std::byte> mine,
                                                 std::string_view step, Nanos timeout) const {
  return state_->Step(mine, true, -1, step, timeout);
}

Result<Records> RendezvousBootstrap::DoGather(std::span<const std::byte> mine, int root,
                                              std::string_view step, Nanos timeout) const {
  return state_->Step(mine, false, root, step, timeout);
}

Status RendezvousBootstrap::DoBarrier(Nanos timeout, std::string_view step) const {
  return state_->Step({}, false, -1, step, timeout).status();
}

const std::vector<int>& RendezvousBootstrap::missing_at_last_step() const {
  return state_->missing_;
}

void RendezvousBootstrap::Abort(int code) const { state_->Abort(code); }

void RendezvousBootstrap::Leave() const { state_->Close(); }

}  // namespace mooncake::cluster
