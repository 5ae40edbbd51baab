#include "sim/event_queue.h"

#include <gtest/gtest.h>

namespace mooncake::sim {
namespace {

TEST(EventQueue, PopsInTimeOrderAndAdvancesClock) {
  EventQueue q;
  q.Push(Nanos(30), EventKind::kDecodeStep, 0, 3);
  q.Push(Nanos(10), EventKind::kArrival, -1, 1);
  q.Push(Nanos(20), EventKind::kKvArrived, 1, 2);
  std::vector<uint32_t> order;
  while (!q.empty()) {
    Event e = q.Pop();
    EXPECT_EQ(q.now(), e.time);
    order.push_back(e.request);
  }
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 2, 3}));
}

TEST(EventQueue, SimultaneousEventsPopInPushOrder) {
  EventQueue q;
  for (uint32_t i = 0; i < 50; ++i) q.Push(Nanos(5), EventKind::kArrival, -1, i);
  for (uint32_t i = 0; i < 50; ++i) EXPECT_EQ(q.Pop().request, i);
}

TEST(EventQueue, PastEventsRunNowNotBackInTime) {
  EventQueue q;
  q.Push(Nanos(100), EventKind::kArrival, -1, 0);
  q.Pop();
  q.Push(Nanos(50), EventKind::kArrival, -1, 1);
  EXPECT_EQ(q.Pop().time, Nanos(100));
}

}  // namespace
}  // namespace mooncake::sim
