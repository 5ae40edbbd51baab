// Instances kept in load order, so that the scheduler can visit the least loaded first and stop
// as soon as no unvisited instance can win (the pruned search of scheduler.h).
//
// The full search scans instances in rotated order, starting at the decision's rotation offset,
// and keeps the first instance with the smallest key. Visiting a set ordered by key in
// "rotated id" order inside each run of equal keys therefore meets the instances in exactly the
// order of the full search's preference: the first visited of equal keys is the one it keeps.
// Not thread-safe; owned by the scheduler.
#pragma once

#include <compare>
#include <cstdint>
#include <set>
#include <vector>

#include "common/clock.h"

namespace mooncake::conductor {

// A load key: compared by (primary, secondary), then by instance id.
struct OrderKey {
  int64_t primary = 0;
  int64_t secondary = 0;
  int id = 0;
  friend auto operator<=>(const OrderKey&, const OrderKey&) = default;
  friend bool operator==(const OrderKey&, const OrderKey&) = default;
};
using OrderSet = std::set<OrderKey>;

// Visits the keys of `set` in increasing (primary, secondary) order; inside each run of equal
// (primary, secondary), ids >= `rotate` ascending first, then the ids below it. Stops when
// `visit(key)` returns false; returns whether the walk went to the end.
template <typename Visit>
bool WalkRotated(const OrderSet& set, int rotate, Visit&& visit) {
  auto it = set.begin();
  while (it != set.end()) {
    auto next = std::next(it);
    if (next == set.end() || next->primary != it->primary || next->secondary != it->secondary) {
      if (!visit(*it)) return false;  // a run of one: no rotation to apply
      it = next;
      continue;
    }
    const auto run_end = set.lower_bound(OrderKey{it->primary, it->secondary + 1, INT32_MIN});
    const auto mid = set.lower_bound(OrderKey{it->primary, it->secondary, rotate});
    for (auto k = mid; k != run_end; ++k) {
      if (!visit(*k)) return false;
    }
    for (auto k = it; k != mid; ++k) {
      if (!visit(*k)) return false;
    }
    it = run_end;
  }
  return true;
}

// The prefill instances by predicted queue time at a moving clock: an instance whose queue
// drains at or before the watermark (the latest decision time) is idle, queue 0, and ordered by
// its tie-break value alone; the others by (drain time, tie-break). The watermark only moves
// forward: a decision earlier than it cannot be answered here (AdvanceTo returns false) and
// the scheduler then evaluates every instance.
class PrefillLoadOrder {
 public:
  explicit PrefillLoadOrder(int instances);

  // Inserts or moves the instance: its queue drains at `free_at`; ties break on `tie`.
  void Update(int instance, Nanos free_at, int64_t tie);
  // The instance is gone (dead): never visited again.
  void Remove(int instance);
  // Moves the instances that drained by `now` to the idle side. False when `now` is before the
  // watermark (the order then describes a later time).
  bool AdvanceTo(Nanos now);
  // Visits the instances in increasing (queue at the watermark, tie, rotated id) order: first
  // the idle ones, then the busy ones by drain time. `visit(instance)` returns false to stop.
  template <typename Visit>
  void Walk(int rotate, Visit&& visit) const {
    auto by_id = [&](const OrderKey& k) { return visit(k.id); };
    if (WalkRotated(idle_, rotate, by_id)) WalkRotated(busy_, rotate, by_id);
  }
  Nanos watermark() const { return watermark_; }

 private:
  enum class Side : uint8_t { kNone, kIdle, kBusy };
  struct Slot {
    Side side = Side::kNone;
    OrderKey key;
  };
  void Erase(int instance);

  std::vector<Slot> slots_;
  OrderSet idle_;  // (0, tie, id)
  OrderSet busy_;  // (free_at ns, tie, id)
  Nanos watermark_{INT64_MIN};
};

}  // namespace mooncake::conductor
