#include "store/net/journal_sender.h"

#include <algorithm>
#include <iterator>

#include "common/log.h"
#include "common/units.h"
#include "store/net/messages.h"

namespace mooncake::store {
namespace {

// A batch stays far below the RPC's payload limit whatever its keys (up to 4 KiB each).
constexpr size_t kBatchBytes = 8u << 20;

size_t ApproxBytes(const JournalEntry& e) {
  return 64 + e.object.key.size() + 24 * e.object.replicas.size();
}

}  // namespace

JournalSender::JournalSender(transport::Rpc& rpc, JournalConfig config)
    : rpc_(rpc), config_(config) {}

JournalSender::~JournalSender() { Stop(); }

void JournalSender::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void JournalSender::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool JournalSender::has_standby() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !standby_gone_;
}

uint64_t JournalSender::entries_acked() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return acked_;
}

uint64_t JournalSender::Append(std::vector<JournalEntry>& entries) {
  if (entries.empty()) return 0;
  uint64_t last = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (standby_gone_) {
      entries.clear();
      return 0;
    }
    for (JournalEntry& e : entries) unacked_.push_back(std::move(e));
    next_seq_ += entries.size();
    last = next_seq_ - 1;
  }
  entries.clear();
  cv_.notify_one();
  return last;
}

void JournalSender::ReplyWhenAcked(uint64_t seq, transport::Responder responder,
                                   std::vector<std::byte> reply) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fenced_) return;  // a fenced master acknowledges nothing
    if (seq > acked_ && !standby_gone_) {
      waiting_.push_back(Waiting{seq, responder, std::move(reply)});
      return;
    }
  }
  responder.Reply(reply);
}

std::vector<JournalSender::Waiting> JournalSender::TakeAnswerable() {
  std::vector<Waiting> out;
  if (fenced_) return out;
  auto done = [&](const Waiting& w) { return standby_gone_ || w.seq <= acked_; };
  auto first =
      std::partition(waiting_.begin(), waiting_.end(), [&](const Waiting& w) { return !done(w); });
  std::move(first, waiting_.end(), std::back_inserter(out));
  waiting_.erase(first, waiting_.end());
  return out;
}

void JournalSender::FillBatch() {
  sending_.first_seq = acked_ + 1;
  sending_.epoch = epoch_.load();
  sending_.entries.clear();
  size_t n = 0, bytes = 0;
  while (n < unacked_.size() && n < kMaxJournalEntries && bytes < kBatchBytes) {
    bytes += ApproxBytes(unacked_[n]);
    ++n;
  }
  std::move(unacked_.begin(), unacked_.begin() + n, std::back_inserter(sending_.entries));
  unacked_.erase(unacked_.begin(), unacked_.begin() + n);
}

void JournalSender::Unfill() {
  unacked_.insert(unacked_.begin(), std::make_move_iterator(sending_.entries.begin()),
                  std::make_move_iterator(sending_.entries.end()));
  sending_.entries.clear();
}

void JournalSender::Loop() {
  int unanswered = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (unacked_.empty()) {
      cv_.wait_for(lock, config_.keepalive, [this] { return stopping_ || !unacked_.empty(); });
      if (stopping_) break;
    }
    FillBatch();  // empty when idle: the keepalive that lets a fenced master learn it soon
    lock.unlock();
    auto sent = rpc_.Call(config_.standby, static_cast<uint16_t>(StoreMsg::kJournal),
                          sending_.Encode(), config_.send_timeout);
    batches_.fetch_add(1, std::memory_order_relaxed);
    lock.lock();
    Status fenced_by = Status::Ok();
    std::string unresponsive;
    if (sent.ok()) {
      unanswered = 0;
      acked_ = sending_.first_seq + sending_.entries.size() - 1;
      sending_.entries.clear();
    } else if (rpc_.IsDead(config_.standby)) {
      // Declared dead (and so fenced) by this master's failure detector: go on alone.
      standby_gone_ = true;
      sending_.entries.clear();
      unacked_.clear();
      log::Warn("the standby conductor (rank {}) is dead: the master goes on without a standby",
                config_.standby.value);
    } else if (sent.status().code() == ErrorCode::kPeerFailure) {
      fenced_ = true;  // the standby took over (its Rpc fenced this rank)
      fenced_by = sent.status();
    } else {
      Unfill();  // resent with what gathered meanwhile; the standby skips what it has
      if (++unanswered >= config_.unanswered_sends) {
        unanswered = 0;
        unresponsive = "the standby did not acknowledge " +
                       std::to_string(config_.unanswered_sends) +
                       " journal sends in a row: " + sent.status().ToString();
      }
    }
    std::vector<Waiting> answer = TakeAnswerable();
    const bool stop = fenced_ || standby_gone_;
    lock.unlock();
    for (Waiting& w : answer) w.responder.Reply(w.reply);
    if (!fenced_by.ok()) {
      if (on_fenced_) on_fenced_(fenced_by);
      return;
    }
    if (!unresponsive.empty() && on_unresponsive_) on_unresponsive_(unresponsive);
    lock.lock();
    if (stop) break;
  }
}

}  // namespace mooncake::store
