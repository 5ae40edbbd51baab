// MetadataMaster: drains (a store rank's objects copied elsewhere before it leaves), copies
// (re-replication), and the transfers in flight that copies and spills share.
#include <algorithm>

#include "store/master.h"

namespace mooncake::store {

namespace {
std::string RankName(Rank r) { return "store rank " + std::to_string(r.value); }
}  // namespace

Status MetadataMaster::BeginDrain(Rank rank) {
  auto seg = segments_.find(rank);
  if (seg == segments_.end()) return NotFound(RankName(rank) + " has no segment");
  if (!seg->second.draining) ++draining_;
  seg->second.draining = true;
  return Status::Ok();
}

bool MetadataMaster::Draining(Rank rank) const {
  if (draining_ == 0) return false;
  auto seg = segments_.find(rank);
  return seg != segments_.end() && seg->second.draining;
}

Result<MetadataMaster::DrainState> MetadataMaster::Drain(Rank rank) {
  const CallTime now(*this);
  auto seg = segments_.find(rank);
  if (seg == segments_.end()) return NotFound(RankName(rank) + " has no segment");
  if (!seg->second.draining) return InvalidArgument(RankName(rank) + " is not draining");
  ReleaseHeld();
  DrainState state;
  state.used_bytes = seg->second.alloc.used();
  objects_.ForEach([&](const Object& o) {
    for (const Replica& r : o.replicas) {
      if (r.loc.rank != rank) continue;
      if (r.loc.tier == Tier::kSsd) ++state.ssd_replicas;
      if (r.loc.tier == Tier::kDram && o.visible) ++state.dram_replicas;
    }
    return true;
  });
  return state;
}

Status MetadataMaster::RemoveDrained(Rank rank) {
  auto state = Drain(rank);
  if (!state.ok()) return state.status();
  if (!state->drained()) {
    return Status(ErrorCode::kBusy, RankName(rank) + " still holds " +
                                        std::to_string(state->dram_replicas) + " DRAM and " +
                                        std::to_string(state->ssd_replicas) + " SSD replica(s), " +
                                        std::to_string(state->used_bytes) + " B");
  }
  EraseSegment(rank);
  --draining_;
  return Status::Ok();
}

// A replica on a draining rank goes once the object has as many DRAM replicas elsewhere as its
// put asked for (or as there are undrained ranks). Gets stop seeing it at once; its region is
// held until the object's lease (a reader may be reading it) and any copy's deadline pass.
void MetadataMaster::ReleaseDrained() {
  uint32_t undrained = 0;
  for (const auto& [r, seg] : segments_) undrained += seg.draining ? 0 : 1;
  objects_.ForEach([&](Object& o) {
    if (!o.visible || o.copying) return true;
    uint32_t elsewhere = 0;
    bool there = false;
    for (const Replica& r : o.replicas) {
      if (r.loc.tier != Tier::kDram || r.spilling) continue;
      if (Draining(r.loc.rank)) {
        there = true;
      } else {
        ++elsewhere;
      }
    }
    if (!there || elsewhere == 0 || elsewhere < std::min(o.target_replicas, undrained)) {
      return true;
    }
    const Nanos readers_done = std::max(o.lease_until, o.copy_until);
    NoteChanged(o);
    for (size_t i = 0; i < o.replicas.size();) {
      Replica& r = o.replicas[i];
      if (r.loc.tier == Tier::kDram && !r.spilling && Draining(r.loc.rank)) {
        Unlink(o, r);
        HoldUntil(r.loc.rank, r.alloc, readers_done);
        o.replicas.erase(o.replicas.begin() + i);
      } else {
        ++i;
      }
    }
    return true;
  });
}

std::vector<CopyOrder> MetadataMaster::StartCopies(size_t max_orders) {
  std::vector<CopyOrder> orders;
  ReleaseHeld();
  if (draining_ > 0) ReleaseDrained();
  // A copy is bounded as a put is: the copier gives up by then (CopyOrder::timeout).
  const Nanos deadline = Now() + cfg_.put_timeout;
  objects_.ForEach([&](Object& o) {
    if (orders.size() >= max_orders) return false;
    if (!o.visible || o.copying) return true;
    // Replicas on a draining rank count for nothing (they are copied elsewhere) but may be the
    // source when they are all there is.
    const Replica* source = nullptr;
    uint32_t dram = 0;
    for (const Replica& r : o.replicas) {
      if (r.loc.tier != Tier::kDram) continue;
      if (Draining(r.loc.rank)) {
        if (source == nullptr) source = &r;
        continue;
      }
      ++dram;
      source = &r;
    }
    if (source == nullptr || dram >= o.target_replicas) return true;
    // Another live rank, emptiest first, with room now: re-replication never evicts.
    std::vector<Rank> candidates;
    Candidates(ReplicateConfig{}, o.size, &candidates);
    for (Rank rank : candidates) {
      bool holds = false;
      for (const Replica& r : o.replicas) holds = holds || r.loc.rank == rank;
      if (holds) continue;
      auto a = segments_.at(rank).alloc.Allocate(o.size);
      if (!a.ok()) continue;
      const uint64_t ticket = next_ticket_++;
      copies_[ticket] = Spill{o.key, o.put_id, rank, *a, deadline};
      orders.push_back(CopyOrder{ticket, o.key, source->loc,
                                 ReplicaLocation{rank, Tier::kDram, a->offset, o.size}, o.checksum,
                                 cfg_.put_timeout});
      o.copying = true;
      // The source stays (no eviction, no remove) while it may be read: until CompleteCopy(ok)
      // or the copier's deadline, however long after the last get's lease that is.
      o.copy_until = deadline;
      ++stats_.copies_started;
      break;
    }
    return true;
  });
  return orders;
}

Result<MetadataMaster::EndedTransfer> MetadataMaster::TakeTransfer(
    std::unordered_map<uint64_t, Spill>& pending, uint64_t ticket, const char* what,
    bool Object::*in_flight) {
  auto it = pending.find(ticket);
  if (it == pending.end()) {
    return NotFound(std::string("no ") + what + " with ticket " + std::to_string(ticket));
  }
  EndedTransfer t;
  t.spill = std::move(it->second);
  pending.erase(it);
  auto seg = segments_.find(t.spill.rank);
  if (seg != segments_.end()) t.segment = &seg->second;
  t.object = TransferObject(t.spill);
  if (t.object != nullptr) t.object->*in_flight = false;
  return t;
}

MetadataMaster::Object* MetadataMaster::TransferObject(const Spill& transfer) const {
  Object* o = Find(transfer.key);
  return o != nullptr && o->put_id == transfer.object_id ? o : nullptr;
}

void MetadataMaster::DropTransfersTo(
    std::unordered_map<uint64_t, Spill>& pending, Rank rank,
    const std::function<void(Object&, const Spill&)>& still_there) {
  for (auto it = pending.begin(); it != pending.end();) {
    if (it->second.rank != rank) {
      ++it;
      continue;
    }
    if (Object* o = TransferObject(it->second)) still_there(*o, it->second);
    it = pending.erase(it);
  }
}

void MetadataMaster::AddDramReplica(Object& obj, Rank rank, const Allocation& alloc) {
  Replica r;
  r.loc = ReplicaLocation{rank, Tier::kDram, alloc.offset, obj.size};
  r.alloc = alloc;
  obj.replicas.push_back(r);
  LinkDram(obj, obj.replicas.back());
  NoteChanged(obj);
}

Status MetadataMaster::CompleteCopy(uint64_t ticket, bool ok) {
  auto taken = TakeTransfer(copies_, ticket, "copy", &Object::copying);
  if (!taken.ok()) return taken.status();
  const Spill& c = taken->spill;
  if (!ok || taken->object == nullptr || taken->segment == nullptr) {
    // A failed copy may have given up on a write that still lands in the target region; a
    // failed read may still be reading the source (copy_until stays).
    if (taken->segment != nullptr) HoldUntil(c.rank, c.alloc, ok ? Nanos(0) : c.deadline);
    if (taken->object == nullptr) return NotFound("object '" + c.key + "' went away while copied");
    return Status::Ok();
  }
  taken->object->copy_until = Nanos(0);  // every read of the copy ended
  AddDramReplica(*taken->object, c.rank, c.alloc);
  ++stats_.rereplicated;
  return Status::Ok();
}

}  // namespace mooncake::store
