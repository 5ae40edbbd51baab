#include "store/net/journal_sender.h"

#include <algorithm>
#include <iterator>

#include "common/log.h"
#include "common/threads.h"
#include "store/net/messages.h"

namespace mooncake::store {
namespace {

// A batch stays far below the RPC's payload limit whatever its keys (up to 4 KiB each).
constexpr size_t kBatchBytes = 8u << 20;

size_t ApproxBytes(const JournalEntry& e) {
  return 64 + e.object.key.size() + 24 * e.object.replicas.size();
}

}  // namespace

// What the sender, its thread and the replies of its sends share. A reply may arrive after the
// sender is gone (the Rpc outlives it): it then finds `stopping` and does nothing.
struct JournalSender::State : std::enable_shared_from_this<State> {
  struct Waiting {
    uint64_t seq = 0;
    transport::Responder responder;
    std::vector<std::byte> reply;
  };
  State(transport::Rpc& r, JournalConfig c) : rpc(r), config(c) {}

  // Under `lock`: sends the next batch (or, with `keepalive`, an empty one that changes
  // nothing); the lock is released around the send.
  void Send(std::unique_lock<std::mutex>& lock, bool keepalive);
  void OnReply(Result<std::vector<std::byte>> reply, bool keepalive);
  // Under mutex: the waiting answers up to `acked` (all of them once the standby is gone).
  std::vector<Waiting> TakeAnswerable();
  bool CanSend() const {
    return !in_flight && !unacked.empty() && !fenced && !standby_gone && !stopping;
  }

  transport::Rpc& rpc;
  const JournalConfig config;
  SteadyClock clock;
  std::mutex mutex;
  std::condition_variable cv;         // the thread's: something for it to do
  std::vector<JournalEntry> unacked;  // after the batch in flight, in order
  JournalBatch sending;               // the batch in flight
  bool in_flight = false;
  Nanos sent_at{0}, last_send{0};
  uint64_t acked = 0, next_seq = 1, epoch = 0, batches = 0;
  std::vector<Waiting> waiting;
  bool standby_gone = false, fenced = false, stopping = false;
  Status fenced_why;
  int unanswered = 0;
  std::string unresponsive_why;  // for the thread to report
};

void JournalSender::State::Send(std::unique_lock<std::mutex>& lock, bool keepalive) {
  std::vector<std::byte> bytes;
  if (keepalive) {
    JournalBatch empty;
    empty.epoch = epoch;
    empty.first_seq = acked + 1;
    bytes = empty.Encode();
  } else {
    sending.epoch = epoch;
    sending.first_seq = acked + 1;
    sending.entries.clear();
    size_t n = 0, size = 0;
    while (n < unacked.size() && n < kMaxJournalEntries && size < kBatchBytes) {
      size += ApproxBytes(unacked[n]);
      ++n;
    }
    std::move(unacked.begin(), unacked.begin() + n, std::back_inserter(sending.entries));
    unacked.erase(unacked.begin(), unacked.begin() + n);
    in_flight = true;
    bytes = sending.Encode();
  }
  ++batches;
  last_send = sent_at = clock.Now();
  lock.unlock();
  rpc.CallAsync(config.standby, StoreMsg::kJournal, bytes, config.send_timeout,
                [self = shared_from_this(), keepalive](Result<std::vector<std::byte>> reply) {
                  self->OnReply(std::move(reply), keepalive);
                });
  lock.lock();
}

void JournalSender::State::OnReply(Result<std::vector<std::byte>> reply, bool keepalive) {
  std::vector<Waiting> answer;
  bool wake = false;
  {
    std::unique_lock<std::mutex> lock(mutex);
    if (stopping) return;
    if (reply.ok()) {
      unanswered = 0;
      if (!keepalive) acked = sending.first_seq + sending.entries.size() - 1;
    } else if (rpc.IsDead(config.standby)) {
      // Declared dead (and so fenced) by this master's failure detector: go on alone.
      standby_gone = wake = true;
      unacked.clear();
    } else if (reply.status().code() == ErrorCode::kPeerFailure) {
      fenced = wake = true;  // the standby took over: its Rpc fenced this rank
      fenced_why = reply.status();
    } else {
      if (!keepalive) {  // resent with what gathered meanwhile; the standby skips what it has
        unacked.insert(unacked.begin(), std::make_move_iterator(sending.entries.begin()),
                       std::make_move_iterator(sending.entries.end()));
      }
      wake = true;
      if (++unanswered >= config.unanswered_sends) {
        unanswered = 0;
        unresponsive_why = "the standby did not acknowledge " +
                           std::to_string(config.unanswered_sends) +
                           " journal sends in a row: " + reply.status().ToString();
      }
    }
    if (!keepalive) {
      in_flight = false;
      sending.entries.clear();
    }
    answer = TakeAnswerable();
    // The next batch goes before the answers: its round trip overlaps their sends.
    if (reply.ok() && CanSend()) Send(lock, false);
  }
  for (Waiting& w : answer) w.responder.Reply(w.reply);
  if (wake) cv.notify_all();
}

std::vector<JournalSender::State::Waiting> JournalSender::State::TakeAnswerable() {
  std::vector<Waiting> out;
  if (fenced || waiting.empty()) return out;
  auto first = std::partition(waiting.begin(), waiting.end(),
                              [&](const Waiting& w) { return !standby_gone && w.seq > acked; });
  std::move(first, waiting.end(), std::back_inserter(out));
  waiting.erase(first, waiting.end());
  return out;
}

JournalSender::JournalSender(transport::Rpc& rpc, JournalConfig config)
    : rpc_(rpc), config_(config), state_(std::make_shared<State>(rpc, config)) {}

JournalSender::~JournalSender() { Stop(); }

void JournalSender::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void JournalSender::Stop() {
  RaiseFlag(state_->mutex, state_->stopping, state_->cv);
  JoinAll(thread_);
}

bool JournalSender::has_standby() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return !state_->standby_gone;
}

uint64_t JournalSender::batches_sent() const { return CopyLocked(state_->mutex, state_->batches); }

uint64_t JournalSender::entries_acked() const { return CopyLocked(state_->mutex, state_->acked); }

void JournalSender::set_epoch(uint64_t epoch) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->epoch = epoch;
}

uint64_t JournalSender::Append(std::vector<JournalEntry>& entries) {
  if (entries.empty()) return 0;
  std::lock_guard<std::mutex> lock(state_->mutex);
  State& s = *state_;
  const size_t n = entries.size();
  if (s.standby_gone) {
    entries.clear();
    return 0;
  }
  for (JournalEntry& e : entries) s.unacked.push_back(std::move(e));
  entries.clear();
  s.next_seq += n;
  return s.next_seq - 1;
}

void JournalSender::Flush() {
  std::unique_lock<std::mutex> lock(state_->mutex);
  if (state_->CanSend()) state_->Send(lock, false);
}

void JournalSender::ReplyWhenAcked(uint64_t seq, transport::Responder responder,
                                   std::vector<std::byte> reply) {
  {
    std::unique_lock<std::mutex> lock(state_->mutex);
    State& s = *state_;
    if (s.fenced || s.stopping) return;  // a fenced master acknowledges nothing
    if (seq > s.acked && !s.standby_gone) {
      s.waiting.push_back(State::Waiting{seq, responder, std::move(reply)});
      if (s.CanSend()) s.Send(lock, false);
      return;
    }
  }
  responder.Reply(reply);
}

void JournalSender::Loop() {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mutex);
  while (!s.stopping) {
    s.cv.wait_for(lock, config_.keepalive);
    if (s.stopping) break;
    if (s.fenced) {
      const Status why = s.fenced_why;
      lock.unlock();
      if (on_fenced_) on_fenced_(why);
      return;
    }
    if (s.standby_gone) {
      log::Warn("the standby conductor (rank {}) is dead: the master goes on without a standby",
                config_.standby.value);
      return;
    }
    if (!s.unresponsive_why.empty()) {
      const std::string why = std::move(s.unresponsive_why);
      s.unresponsive_why.clear();
      lock.unlock();
      if (on_unresponsive_) on_unresponsive_(why);
      lock.lock();
      continue;
    }
    const Nanos now = s.clock.Now();
    if (s.CanSend()) {
      s.Send(lock, false);  // changes made outside a request, or a resend after a failure
    } else if (s.in_flight && now - s.sent_at > config_.send_timeout) {
      // An unanswered send fails at its deadline only when the Rpc next sweeps (at a CallAsync):
      // the keepalive makes it sweep.
      s.Send(lock, true);
    } else if (!s.in_flight && now - s.last_send >= config_.keepalive) {
      s.Send(lock, true);  // the keepalive that lets a fenced master learn it soon
    }
  }
}

}  // namespace mooncake::store
