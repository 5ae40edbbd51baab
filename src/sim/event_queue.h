// The simulator's virtual clock and pending events.
//
// Events pop in time order; events at the same time pop in the order they were pushed (a
// sequence number breaks ties), which makes every run with the same inputs identical.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "common/clock.h"

namespace mooncake::sim {

enum class EventKind : uint8_t {
  kArrival,        // a trace request arrives
  kFetchDone,      // a prefill instance has pulled a remote prefix
  kPrefillChunk,   // a prefill instance finished one chunk of a request
  kKvArrived,      // all of a request's KV reached its decode instance
  kDecodeStep,     // a decode instance finished one step of its batch
  kColocatedStep,  // a colocated (vLLM-like) instance finished a step
};

struct Event {
  Nanos time{0};
  uint64_t seq = 0;
  EventKind kind = EventKind::kArrival;
  int32_t instance = -1;
  uint32_t request = 0;
};

class EventQueue {
 public:
  // `time` must not be earlier than now().
  void Push(Nanos time, EventKind kind, int32_t instance, uint32_t request);
  bool empty() const { return heap_.empty(); }
  // Removes the earliest event and advances now() to its time.
  Event Pop();
  Nanos now() const { return now_; }
  uint64_t pushed() const { return seq_; }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  Nanos now_{0};
  uint64_t seq_ = 0;
};

}  // namespace mooncake::sim
