#include "sim/event_queue.h"

#include <algorithm>

namespace mooncake::sim {

void EventQueue::Push(Nanos time, EventKind kind, int32_t instance, uint32_t request) {
  heap_.push(Event{std::max(time, now_), seq_++, kind, instance, request});
}

Event EventQueue::Pop() {
  Event e = heap_.top();
  heap_.pop();
  now_ = e.time;
  return e;
}

}  // namespace mooncake::sim
