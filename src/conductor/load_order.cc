#include "conductor/load_order.h"

#include <algorithm>

namespace mooncake::conductor {

PrefillLoadOrder::PrefillLoadOrder(int instances, size_t hot_holders)
    : hot_holders_(hot_holders), slots_(instances) {
  for (int i = 0; i < instances; ++i) Insert(all_, i);
}

OrderKey PrefillLoadOrder::KeyOf(int instance) const {
  const Slot& s = slots_[instance];
  return s.idle ? OrderKey{0, s.tie, instance} : OrderKey{s.free_at.count(), s.tie, instance};
}

void PrefillLoadOrder::Insert(Group& g, int instance) const {
  (slots_[instance].idle ? g.idle : g.busy).insert(KeyOf(instance));
}

void PrefillLoadOrder::Erase(Group& g, int instance) const {
  (slots_[instance].idle ? g.idle : g.busy).erase(KeyOf(instance));
}

void PrefillLoadOrder::EraseEverywhere(int instance) {
  Erase(all_, instance);
  for (uint64_t b : slots_[instance].hot) Erase(hot_.at(b), instance);
}

void PrefillLoadOrder::InsertEverywhere(int instance) {
  Insert(all_, instance);
  for (uint64_t b : slots_[instance].hot) Insert(hot_.at(b), instance);
}

void PrefillLoadOrder::Update(int instance, Nanos free_at, int64_t tie) {
  Slot& s = slots_[instance];
  if (!s.live) return;
  EraseEverywhere(instance);
  s.free_at = free_at;
  s.tie = tie;
  s.idle = free_at <= watermark_;
  InsertEverywhere(instance);
}

void PrefillLoadOrder::Remove(int instance) {
  Slot& s = slots_[instance];
  if (!s.live) return;
  EraseEverywhere(instance);
  s.live = false;
  s.hot.clear();
}

bool PrefillLoadOrder::AdvanceTo(Nanos now) {
  if (now < watermark_) return false;
  watermark_ = now;
  while (!all_.busy.empty() && all_.busy.begin()->primary <= now.count()) {
    const int i = all_.busy.begin()->id;
    EraseEverywhere(i);
    slots_[i].idle = true;
    InsertEverywhere(i);
  }
  return true;
}

void PrefillLoadOrder::OnHolderAdded(BlockHash block, int instance,
                                     std::span<const int32_t> holders) {
  auto it = hot_.find(block.value);
  if (it != hot_.end()) {
    Slot& s = slots_[instance];
    if (!s.live) return;
    s.hot.push_back(block.value);
    Insert(it->second, instance);
    return;
  }
  if (holders.size() <= hot_holders_) return;
  Group& g = hot_[block.value];  // the block turns hot: order all its live holders
  for (int32_t h : holders) {
    if (!slots_[h].live) continue;
    slots_[h].hot.push_back(block.value);
    Insert(g, h);
  }
}

void PrefillLoadOrder::OnHolderRemoved(BlockHash block, int instance,
                                       std::span<const int32_t> holders) {
  auto it = hot_.find(block.value);
  if (it == hot_.end()) return;
  Slot& s = slots_[instance];
  if (s.live) {
    Erase(it->second, instance);
    s.hot.erase(std::find(s.hot.begin(), s.hot.end(), block.value));
  }
  // Cools down at half the threshold, so that a block at the edge does not flip every time.
  if (holders.size() > hot_holders_ / 2) return;
  for (int32_t h : holders) {
    Slot& hs = slots_[h];
    if (!hs.live) continue;
    hs.hot.erase(std::find(hs.hot.begin(), hs.hot.end(), block.value));
  }
  hot_.erase(it);
}

}  // namespace mooncake::conductor
