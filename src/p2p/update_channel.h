// The fetcher's line to the tracker, off the copy loop: the loop queues what happened (pieces
// landed, reads started, damaged pieces, failed holders) and takes the tracker's answers; a
// thread sends one Update per `interval` with everything queued and fetches the events since
// the last answer. A slow tracker (rank 0 descheduled on a crowded node) thus never stalls the
// copies. Thread-safe; the loop and the thread meet under one mutex.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/periodic_thread.h"
#include "common/status.h"
#include "p2p/messages.h"
#include "p2p/tracker_client.h"

namespace mooncake::p2p {

class UpdateChannel {
 public:
  // Starts the thread. `tracker` outlives the channel.
  UpdateChannel(TrackerClient& tracker, std::string name, Nanos interval);
  ~UpdateChannel();  // Stop()
  UpdateChannel(const UpdateChannel&) = delete;
  UpdateChannel& operator=(const UpdateChannel&) = delete;

  void Landed(uint32_t piece);
  void Started(uint32_t piece);
  void Bad(int32_t holder, uint32_t piece);
  void Failed(int32_t holder);
  // Answers received since the last call, oldest first.
  std::vector<UpdateResponse> TakeAnswers();
  // The error of the last Update call, or OK (a fetch gives up when the tracker stays away).
  Status last_error() const;
  Nanos last_success() const;
  // Stops the thread, then sends what is still queued with one last Update (its error).
  Status Flush();
  void Stop();

 private:
  // The thread's turn: one Update, then more at once while the tracker has a backlog of events.
  bool Tick();
  // One Update with what is queued; answers appended. Called by the thread (or Flush).
  Status SendOnce();

  TrackerClient& tracker_;
  const std::string name_;
  const Nanos interval_;
  SteadyClock clock_;
  mutable std::mutex mutex_;
  UpdateRequest pending_;
  std::vector<UpdateResponse> answers_;
  uint64_t next_ = 0;
  Status error_;
  Nanos last_success_{0};
  std::mutex send_mutex_;  // one Update at a time (the thread, or Flush after it stopped)
  PeriodicThread ticker_;
};

}  // namespace mooncake::p2p
