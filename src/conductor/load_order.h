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
#include <iterator>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "conductor/kv_index.h"

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

// The live prefill instances by predicted queue time at a moving clock, and the same order for
// the holders of each "hot" block (a block of the KV index with more than `hot_holders`
// holders), kept current as a HolderListener of the index. An instance whose queue drains at or
// before the watermark (the latest decision time) is idle, queue 0, and ordered by its
// tie-break value alone; the others by (drain time, tie-break). The watermark only moves
// forward: a decision earlier than it cannot be answered here (AdvanceTo returns false) and the
// scheduler then evaluates every instance.
class PrefillLoadOrder final : public HolderListener {
 public:
  PrefillLoadOrder(int instances, size_t hot_holders);

  // Inserts or moves the instance: its queue drains at `free_at`; ties break on `tie`.
  void Update(int instance, Nanos free_at, int64_t tie);
  // The instance is gone (dead): leaves every order for good.
  void Remove(int instance);
  // Moves the instances that drained by `now` to the idle side. False when `now` is before the
  // watermark (the orders then describe a later time).
  bool AdvanceTo(Nanos now);

  // Visits the live instances (or the live holders of a hot block) in increasing (queue at the
  // watermark, tie, rotated id) order: first the idle ones, then the busy ones by drain time.
  // `visit(instance)` returns false to stop.
  template <typename Visit>
  void Walk(int rotate, Visit&& visit) const {
    WalkGroup(all_, rotate, visit);
  }
  // False when `block` is not hot (then nothing is visited).
  template <typename Visit>
  bool WalkHolders(BlockHash block, int rotate, Visit&& visit) const {
    auto it = hot_.find(block.value);
    if (it == hot_.end()) return false;
    WalkGroup(it->second, rotate, visit);
    return true;
  }
  size_t hot_blocks() const { return hot_.size(); }

  void OnHolderAdded(BlockHash block, int instance, std::span<const int32_t> holders) override;
  void OnHolderRemoved(BlockHash block, int instance, std::span<const int32_t> holders) override;

 private:
  struct Group {
    OrderSet idle;  // (0, tie, id)
    OrderSet busy;  // (free_at ns, tie, id)
  };
  struct Slot {
    bool live = true;
    bool idle = false;
    Nanos free_at{0};
    int64_t tie = 0;
    std::vector<uint64_t> hot;  // the hot blocks it holds
  };
  template <typename Visit>
  static void WalkGroup(const Group& g, int rotate, Visit& visit) {
    auto by_id = [&](const OrderKey& k) { return visit(k.id); };
    if (WalkRotated(g.idle, rotate, by_id)) WalkRotated(g.busy, rotate, by_id);
  }
  OrderKey KeyOf(int instance) const;
  void Insert(Group& g, int instance) const;
  void Erase(Group& g, int instance) const;
  void EraseEverywhere(int instance);
  void InsertEverywhere(int instance);

  size_t hot_holders_;
  std::vector<Slot> slots_;
  Group all_;
  std::unordered_map<uint64_t, Group> hot_;  // block -> its live holders
  Nanos watermark_{INT64_MIN};
};

}  // namespace mooncake::conductor
