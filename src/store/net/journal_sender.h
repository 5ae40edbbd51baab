// JournalSender: the active master's side of the journal to its standby (store/journal.h,
// docs/FAULTS.md "A standby conductor"). The master service appends the entries of every call
// that changed committed state, under its lock, so they are numbered in commit order; what has
// gathered goes to the standby as one batch (StoreMsg::kJournal), one batch in flight at a time,
// and the answers that waited for it (ReplyWhenAcked) are sent from the thread that receives the
// standby's acknowledgement: a put-end or remove is acknowledged to its client only after the
// standby has it, one RPC round trip later and without a thread hand-off on the way. Requests
// that changed nothing (gets) never wait.
//
// When the standby answers that it was promoted ("fenced"), nothing waiting is ever answered and
// OnFenced runs: this master must stop. When the standby is declared dead (the failure detector
// fences it), the sender goes on without it and answers what waited. A background thread sends
// a keepalive when idle (so a fenced master learns it without traffic), resends after a failed
// send, and runs the handlers.
//
// Threading: Append under the master service's lock (any thread); Flush and ReplyWhenAcked from
// any thread, not under that lock; the handlers run on the sender's thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "store/journal.h"
#include "transport/rpc.h"

namespace mooncake::store {

struct JournalConfig {
  Rank standby;
  Nanos send_timeout = std::chrono::seconds(1);      // one send (the failure timeout)
  Nanos keepalive = std::chrono::milliseconds(100);  // an empty batch after this long idle
  // Sends that time out in a row before the standby counts as unresponsive (OnUnresponsive).
  int unanswered_sends = 5;
};

class JournalSender {
 public:
  // `rpc` must outlive the sender.
  JournalSender(transport::Rpc& rpc, JournalConfig config);
  ~JournalSender();
  JournalSender(const JournalSender&) = delete;
  JournalSender& operator=(const JournalSender&) = delete;

  // The standby answered that it took over: `why` says by which epoch. Set before Start.
  void OnFenced(std::function<void(const Status& why)> on_fenced) {
    on_fenced_ = std::move(on_fenced);
  }
  // The standby did not answer `unanswered_sends` sends in a row while not declared dead: the
  // owner should declare it dead (which fences it; the sender then goes on alone).
  void OnUnresponsive(std::function<void(const std::string& why)> on_unresponsive) {
    on_unresponsive_ = std::move(on_unresponsive);
  }
  void Start();
  // Stops the thread; answers nothing more. A send still in flight finds the sender's state
  // alive (shared with it) and does nothing.
  void Stop();

  // Numbers and queues `entries` (moved out, left empty). Returns the number of the last one: the
  // answer of the call that made them waits for it. 0 when nothing needs waiting (no entries,
  // or no standby any more).
  uint64_t Append(std::vector<JournalEntry>& entries);
  // Sends what waits, unless a batch is in flight (its acknowledgement sends the rest).
  void Flush();
  // Sends `reply` through `responder` once entry `seq` is acknowledged (at once for 0, or once
  // the sender goes on without a standby), and flushes.
  void ReplyWhenAcked(uint64_t seq, transport::Responder responder, std::vector<std::byte> reply);
  // The membership epoch batches carry.
  void set_epoch(uint64_t epoch);

  bool has_standby() const;
  uint64_t batches_sent() const;
  uint64_t entries_acked() const;

 private:
  struct State;
  void Loop();

  transport::Rpc& rpc_;
  JournalConfig config_;
  std::function<void(const Status&)> on_fenced_;
  std::function<void(const std::string&)> on_unresponsive_;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace mooncake::store
