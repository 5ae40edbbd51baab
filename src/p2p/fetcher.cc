#include "p2p/fetcher.h"

#include <fmt/format.h>
#include <sched.h>

#include <thread>

#include "common/checksum.h"
#include "common/log.h"
#include "p2p/copy_hash.h"

namespace mooncake::p2p {
namespace {
// Mapped copies done in a row before the loop looks at the tracker's answers again.
constexpr int kCopiesPerRound = 4;
}  // namespace

Fetcher::Fetcher(const FetchConfig& config, transport::Transport& transport, TrackerClient& tracker,
                 const Manifest& manifest, LocalObject& dest, const FetchOptions& options)
    : config_(config),
      transport_(transport),
      tracker_(tracker),
      manifest_(manifest),
      dest_(dest),
      options_(options),
      layout_(manifest.entries, manifest.piece_size),
      picker_(layout_.count(), transport.world_size(), transport.self().value, options.stripe,
              options.stripes),
      entry_addrs_(std::max(1, transport.world_size())),
      bad_from_(std::max(1, transport.world_size()), 0) {
  if (!options.stripe_owners.empty()) picker_.SetStripeOwners(options.stripe_owners);
}

Fetcher::~Fetcher() {
  // Reads still in flight (a deadline passed) may still write into `dest`: the transport keeps
  // their batches; `dest` must outlive them, which the caller's object does until Close.
  for (auto& f : in_flight_) transport_.RetainUntilClosed(std::shared_ptr<void>(f.batch.release()));
}

void Fetcher::AddHolder(const HolderCopy& copy) {
  const int32_t r = copy.rank;
  if (r == transport_.self().value || r >= transport_.world_size()) return;
  if (copy.entry_addrs.size() != manifest_.entries.size()) {
    log::Warn("p2p: rank {}'s copy of '{}' lists {} entries, not {}: not used", r, manifest_.name,
              copy.entry_addrs.size(), manifest_.entries.size());
    picker_.HolderFailed(r);
    return;
  }
  for (const auto& encoded : copy.descriptors) {
    auto d = transport::RemoteDescriptor::Decode(encoded);
    Status s = d.ok() ? transport_.Import(Rank{r}, *d) : d.status();
    if (!s.ok()) {
      log::Warn("p2p: cannot address rank {}'s copy of '{}': {}", r, manifest_.name, s.ToString());
      picker_.HolderFailed(r);
      return;
    }
  }
  entry_addrs_[r] = copy.entry_addrs;
  picker_.AddHolder(r, copy.complete);
}

void Fetcher::Apply(const UpdateResponse& answer) {
  size_t joined = 0;
  for (const Event& e : answer.events) {
    switch (e.kind) {
      case EventKind::kJoined:
        if (joined < answer.holders.size()) AddHolder(answer.holders[joined++]);
        break;
      case EventKind::kLanded:
        picker_.HolderHas(e.rank, e.piece);
        break;
      case EventKind::kStarted:
        if (e.rank != transport_.self().value) picker_.StartedElsewhere(e.piece);
        break;
      case EventKind::kDropped:
        picker_.HolderDropped(e.rank, e.piece);
        break;
      case EventKind::kLeft:
        picker_.RemoveHolder(e.rank);
        break;
    }
  }
}

Status Fetcher::CheckPresent(UpdateChannel& channel) {
  for (uint32_t p = 0; p < layout_.count(); ++p) {
    const PieceRef& ref = layout_[p];
    if (!dest_.entry_existed(ref.entry)) continue;
    if (Checksum64(dest_.entry_data(ref.entry) + ref.offset, ref.length) !=
        manifest_.checksums[p]) {
      continue;
    }
    picker_.Have(p);
    channel.Landed(p);
    ++stats_.present;
  }
  return Status::Ok();
}

void Fetcher::Finish(UpdateChannel& channel, const Pick& pick, const Status& status, uint64_t sum) {
  picker_.End(pick);
  if (!status.ok()) {
    ++stats_.read_failures;
    log::Warn("p2p: reading piece {} of '{}' from rank {} failed: {}; not reading from it again",
              pick.piece, manifest_.name, pick.holder, status.ToString());
    picker_.HolderFailed(pick.holder);
    channel.Failed(pick.holder);
    return;
  }
  if (sum != manifest_.checksums[pick.piece]) {
    ++stats_.corrupt;
    log::Warn("p2p: piece {} of '{}' from rank {} fails its checksum; reading it elsewhere",
              pick.piece, manifest_.name, pick.holder);
    picker_.MarkBad(pick.holder, pick.piece);
    channel.Bad(pick.holder, pick.piece);
    if (++bad_from_[pick.holder] >= kMaxBadPieces) {
      log::Warn("p2p: rank {} served {} damaged pieces of '{}': not reading from it again",
                pick.holder, bad_from_[pick.holder], manifest_.name);
      picker_.HolderFailed(pick.holder);
    }
    return;
  }
  picker_.Have(pick.piece);
  channel.Landed(pick.piece);
  if (picker_.is_source(pick.holder)) {
    ++stats_.from_source;
  } else {
    ++stats_.from_peers;
  }
  ++verified_;
  if (options_.on_piece) options_.on_piece(verified_);
}

bool Fetcher::StartReads(UpdateChannel& channel) {
  bool any = false;
  int copies = 0;
  const Nanos idle = idle_since_.count() > 0 ? clock_.Now() - idle_since_ : Nanos(0);
  while (copies < kCopiesPerRound) {
    auto pick =
        picker_.Next(config_.limits, idle >= config_.orphan_delay, idle >= config_.steal_delay);
    if (!pick) break;
    any = true;
    channel.Started(pick->piece);
    const PieceRef& ref = layout_[pick->piece];
    std::byte* local = dest_.entry_data(ref.entry) + ref.offset;
    const uint64_t remote = entry_addrs_[pick->holder][ref.entry] + ref.offset;
    if (std::byte* mapped = transport_.MappedAddress(Rank{pick->holder}, remote, ref.length)) {
      Finish(channel, *pick, Status::Ok(), CopyAndHash(local, mapped, ref.length));
      ++copies;
      continue;
    }
    transport::TransferRequest read{transport::OpKind::kRead, local, Rank{pick->holder}, remote,
                                    ref.length};
    auto batch = transport_.Submit(std::span<const transport::TransferRequest>(&read, 1));
    if (!batch.ok()) {
      Finish(channel, *pick, batch.status(), 0);
      continue;
    }
    in_flight_.push_back({*pick, std::move(*batch), clock_.Now()});
  }
  return any;
}

bool Fetcher::PollReads(UpdateChannel& channel) {
  if (in_flight_.empty()) return false;
  bool any = false;
  const Nanos now = clock_.Now();
  for (size_t i = 0; i < in_flight_.size();) {
    InFlight& f = in_flight_[i];
    const transport::BatchState state = f.batch->Poll();
    const bool late =
        state == transport::BatchState::kInProgress && now - f.started > config_.piece_timeout;
    if (state == transport::BatchState::kInProgress && !late) {
      ++i;
      continue;
    }
    any = true;
    const PieceRef& ref = layout_[f.pick.piece];
    if (state == transport::BatchState::kCompleted) {
      const std::byte* local = dest_.entry_data(ref.entry) + ref.offset;
      Finish(channel, f.pick, Status::Ok(), Checksum64(local, ref.length));
    } else if (late) {
      transport_.RetainUntilClosed(std::shared_ptr<void>(f.batch.release()));
      ++abandoned_;
      Finish(
          channel, f.pick,
          Timeout(fmt::format("no answer within {} ms", config_.piece_timeout.count() / 1'000'000)),
          0);
    } else {
      auto statuses = f.batch->RequestStatus();
      Finish(channel, f.pick, statuses.empty() ? Internal("read failed") : statuses[0], 0);
    }
    in_flight_[i] = std::move(in_flight_.back());
    in_flight_.pop_back();
  }
  return any;
}

Status Fetcher::CheckLimits(UpdateChannel& channel, Nanos stalled_since) {
  const Nanos now = clock_.Now();
  if (options_.cancel != nullptr && options_.cancel->load()) {
    return PeerFailure(fmt::format("fetch of '{}' abandoned: the tracker is gone", manifest_.name));
  }
  if (now - start_ > config_.deadline) {
    return Timeout(fmt::format("fetch of '{}' not done within p2p.deadline ({} of {} pieces)",
                               manifest_.name, layout_.count() - picker_.missing(),
                               layout_.count()));
  }
  if (now - channel.last_success() > config_.stall_timeout) {
    return channel.last_error().WithContext("the tracker did not answer updates");
  }
  if (stalled_since.count() > 0 && now - stalled_since > config_.stall_timeout) {
    auto piece = picker_.Unavailable();
    return PeerFailure(
        fmt::format("fetch of '{}' stalled: {} pieces missing and no live holder has piece {}",
                    manifest_.name, picker_.missing(), piece ? static_cast<int64_t>(*piece) : -1));
  }
  return Status::Ok();
}

Status Fetcher::FetchMissing(UpdateChannel& channel) {
  // No CallerProgressScope here: most of the time this thread copies mapped pieces and drives
  // no progress, and the transport's own thread must keep serving the RPCs (heartbeats, the
  // tracker's answers) meanwhile. Polling a batch drives progress once (SharedBatch::Poll).
  Nanos stalled_since{0};
  int idle = 0;
  while (!picker_.complete()) {
    for (const auto& answer : channel.TakeAnswers()) {
      Apply(answer);
      ++answers_;
    }
    const bool started = StartReads(channel);
    const bool finished = PollReads(channel);
    MC_RETURN_IF_ERROR(CheckLimits(channel, stalled_since));
    if (started || finished) {
      if (idle_since_.count() > 0) idle_total_ += clock_.Now() - idle_since_;
      idle = 0;
      stalled_since = idle_since_ = Nanos(0);
      continue;
    }
    if (in_flight_.empty() && stalled_since.count() == 0) {
      stalled_since = idle_since_ = clock_.Now();
      ++idle_periods_;
    }
    // Nothing to do: spin a little for reads about to land, then sleep briefly (crowded nodes
    // need the core for the ranks that copy).
    if (++idle < 64 && !in_flight_.empty()) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(in_flight_.empty() ? 200 : 20));
    }
  }
  return Status::Ok();
}

std::vector<uint32_t> Fetcher::VerifyAll() {
  std::vector<uint32_t> bad;
  for (uint32_t p = 0; p < layout_.count(); ++p) {
    const PieceRef& ref = layout_[p];
    if (Checksum64(dest_.entry_data(ref.entry) + ref.offset, ref.length) !=
        manifest_.checksums[p]) {
      bad.push_back(p);
    }
  }
  return bad;
}

Result<FetchStats> Fetcher::Run() {
  start_ = clock_.Now();
  UpdateChannel channel(tracker_, manifest_.name, config_.update_interval);
  MC_RETURN_IF_ERROR(CheckPresent(channel));
  for (uint32_t round = 0;; ++round) {
    Status s = FetchMissing(channel);
    if (!s.ok()) {
      channel.Stop();
      return s;
    }
    if (round == 0) stats_.fetch_time = clock_.Now() - start_;
    // Every piece was hashed as it landed. Only a read abandoned at its deadline could still
    // write over a checked piece (UCX cannot cancel it): then check everything once more.
    if (abandoned_ == 0) break;
    abandoned_ = 0;
    const Nanos verify_start = clock_.Now();
    std::vector<uint32_t> bad = VerifyAll();
    stats_.verify_time += clock_.Now() - verify_start;
    if (bad.empty()) break;
    if (round + 1 >= config_.verify_rounds) {
      channel.Stop();
      return Corrupt(fmt::format("{} pieces of '{}' (first: {}) keep failing their final check",
                                 bad.size(), manifest_.name, bad[0]));
    }
    stats_.late_corrupt += bad.size();
    for (uint32_t p : bad) picker_.Lost(p);
  }
  stats_.bytes = layout_.total_bytes();
  log::Info("p2p: fetch of '{}': idle {:.3f} s in {} periods, {} answers applied", manifest_.name,
            std::chrono::duration<double>(idle_total_).count(), idle_periods_, answers_);
  MC_RETURN_IF_ERROR(channel.Flush().WithContext("last update to the tracker"));
  return stats_;
}

}  // namespace mooncake::p2p
