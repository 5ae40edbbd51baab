// MetadataMaster: promotion of SSD-resident objects back to DRAM.
#include <algorithm>

#include "store/master.h"

namespace mooncake::store {

// Called from Get after a hit served from SSD only. Reserves a DRAM region on the rank that holds
// the SSD copy (the store rank copies the block from its own tier, no network) and hands the
// order to the sink; the region stays hidden until CompletePromote.
void MetadataMaster::MaybePromote(Object& o) {
  if (sink_ == nullptr || cfg_.promote_after == 0 || o.promoting ||
      o.ssd_hits < cfg_.promote_after) {
    return;
  }
  auto ssd = std::find_if(o.replicas.begin(), o.replicas.end(),
                          [](const Replica& r) { return r.loc.tier == Tier::kSsd; });
  if (ssd == o.replicas.end()) return;
  const ReplicaLocation from = ssd->loc;  // AllocateOn may evict: copy before it runs
  auto seg = segments_.find(from.rank);
  if (seg == segments_.end() || seg->second.draining) return;  // a draining rank takes nothing
  auto a = AllocateOn(from.rank, seg->second, o.size);
  if (!a.ok()) return;  // no room now: a later hit tries again
  PromotionOrder order{next_ticket_++,
                       o.key,
                       o.put_id,
                       o.size,
                       o.checksum,
                       from,
                       ReplicaLocation{from.rank, Tier::kDram, a->offset, o.size}};
  if (!sink_->OnPromote(order)) {
    (void)seg->second.alloc.Free(*a);
    return;
  }
  promotions_[order.ticket] = Spill{o.key, o.put_id, from.rank, *a};
  o.promoting = true;
  ++stats_.promotions_started;
}

Status MetadataMaster::CompletePromote(uint64_t ticket, bool ok) {
  auto ended = TakeTransfer(promotions_, ticket, "promotion", &Object::promoting);
  if (!ended.ok()) return ended.status();
  const Spill& p = ended->spill;
  Object* o = ended->object;
  if (ok && o != nullptr && ended->segment != nullptr) {
    AddDramReplica(*o, p.rank, p.alloc);
    o->ssd_hits = 0;
    ++stats_.promotions_done;
    EnforceWatermark(p.rank, *ended->segment);
    return Status::Ok();
  }
  if (ended->segment != nullptr) (void)ended->segment->alloc.Free(p.alloc);
  return o != nullptr ? Status::Ok() : NotFound("object '" + p.key + "' went away while promoted");
}

}  // namespace mooncake::store
