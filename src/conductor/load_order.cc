#include "conductor/load_order.h"

namespace mooncake::conductor {

PrefillLoadOrder::PrefillLoadOrder(int instances) : slots_(instances) {}

void PrefillLoadOrder::Erase(int instance) {
  Slot& s = slots_[instance];
  if (s.side == Side::kIdle) idle_.erase(s.key);
  if (s.side == Side::kBusy) busy_.erase(s.key);
  s.side = Side::kNone;
}

void PrefillLoadOrder::Update(int instance, Nanos free_at, int64_t tie) {
  Erase(instance);
  Slot& s = slots_[instance];
  if (free_at <= watermark_) {
    s.side = Side::kIdle;
    s.key = OrderKey{0, tie, instance};
    idle_.insert(s.key);
  } else {
    s.side = Side::kBusy;
    s.key = OrderKey{free_at.count(), tie, instance};
    busy_.insert(s.key);
  }
}

void PrefillLoadOrder::Remove(int instance) { Erase(instance); }

bool PrefillLoadOrder::AdvanceTo(Nanos now) {
  if (now < watermark_) return false;
  watermark_ = now;
  while (!busy_.empty() && busy_.begin()->primary <= now.count()) {
    const OrderKey k = *busy_.begin();
    busy_.erase(busy_.begin());
    Slot& s = slots_[k.id];
    s.side = Side::kIdle;
    s.key = OrderKey{0, k.secondary, k.id};
    idle_.insert(s.key);
  }
  return true;
}

}  // namespace mooncake::conductor
