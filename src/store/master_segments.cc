// MetadataMaster: segments, placement, eviction and the second-tier seam (drains and copies:
// master_copies.cc).
#include <algorithm>

#include "store/master.h"

namespace mooncake::store {

namespace {
std::string RankName(Rank r) { return "store rank " + std::to_string(r.value); }
}  // namespace

Status MetadataMaster::AddSegment(Rank rank, uint64_t capacity) {
  if (segments_.count(rank)) {
    return {ErrorCode::kAlreadyExists, RankName(rank) + " already has a segment"};
  }
  if (capacity < SegmentAllocator::kAlignment) {
    return InvalidArgument(RankName(rank) + ": segment of " + std::to_string(capacity) + " B");
  }
  segments_.emplace(rank, capacity);
  NoteSegment(JournalOp::kAddSegment, rank, capacity);
  return Status::Ok();
}

Result<bool> MetadataMaster::MarkSuspect(Rank rank) {
  if (segments_.count(rank) == 0) return NotFound(RankName(rank) + " has no segment");
  const Nanos now = Now();
  Nanos& until = suspect_until_[rank];
  const bool fresh = until <= now;
  until = now + cfg_.suspect_for;
  return fresh;
}

Status MetadataMaster::RemoveSegment(Rank rank, std::vector<std::string>* lost) {
  auto seg = segments_.find(rank);
  if (seg == segments_.end()) return NotFound(RankName(rank) + " has no segment");
  if (seg->second.draining) --draining_;  // it died while draining
  std::vector<std::string> affected;
  objects_.ForEach([&](const Object& o) {
    for (const Replica& r : o.replicas) {
      if (r.loc.rank == rank) {
        affected.push_back(o.key);
        break;
      }
    }
    return true;
  });
  DropTransfersTo(spills_, rank, [&](Object& o, const Spill& spill) {
    --o.pending_spills;
    affected.push_back(spill.key);
  });
  DropTransfersTo(copies_, rank, [](Object& o, const Spill&) { o.copying = false; });
  DropTransfersTo(promotions_, rank, [](Object& o, const Spill&) { o.promoting = false; });
  for (const std::string& key : affected) {
    Object* found = Find(key);
    if (found == nullptr) continue;
    Object& o = *found;
    if (!o.visible) {
      ++stats_.revoked_puts;
      RevokeInFlight(o, rank);  // its writes to live ranks may still be running
      continue;
    }
    NoteChanged(o);
    for (size_t i = 0; i < o.replicas.size();) {
      if (o.replicas[i].loc.rank == rank) {
        Unlink(o, o.replicas[i]);
        o.replicas.erase(o.replicas.begin() + i);
      } else {
        ++i;
      }
    }
    if (o.replicas.empty() && o.pending_spills == 0) {
      ++stats_.objects_lost;
      if (lost != nullptr) lost->push_back(key);
    }
    EraseIfEmpty(o);
  }
  for (auto it = held_.begin(); it != held_.end();) {
    it = it->second.first == rank ? held_.erase(it) : std::next(it);
  }
  EraseSegment(rank);
  ++removed_segments_;
  ++stats_.removed_ranks;
  return Status::Ok();
}

void MetadataMaster::EraseSegment(Rank rank) {
  suspect_until_.erase(rank);
  segments_.erase(rank);
  NoteSegment(JournalOp::kRemoveSegment, rank);
}

// Preferred ranks first (in the caller's order); then the first replicas' ranks drawn by free
// capacity (see below); then the rest, emptiest first, as fallbacks when an allocation fails.
void MetadataMaster::Candidates(const ReplicateConfig& cfg, uint64_t size,
                                std::vector<Rank>* candidates) const {
  std::vector<Rank>& out = *candidates;
  out.clear();
  for (Rank r : cfg.preferred_ranks) {
    auto seg = segments_.find(r);
    if (seg != segments_.end() && !seg->second.draining &&
        std::find(out.begin(), out.end(), r) == out.end()) {
      out.push_back(r);
    }
  }
  size_t preferred = out.size();
  for (const auto& [r, seg] : segments_) {
    if (seg.draining) continue;  // BeginDrain: nothing new goes there
    if (std::find(out.begin(), out.begin() + preferred, r) == out.begin() + preferred) {
      out.push_back(r);
    }
  }
  // A rank a client found failing gets nothing new while another rank can take it: a put
  // retried after a failed write must not be sent back to the dead rank (the emptiest one, as
  // it takes nothing new) for the whole failure timeout.
  const Nanos now = suspect_until_.empty() ? Nanos{0} : Now();  // no clock read per put
  auto suspected = [&](Rank r) {
    auto it = suspect_until_.find(r);
    return it != suspect_until_.end() && it->second > now;
  };
  if (!suspect_until_.empty() && !std::all_of(out.begin(), out.end(), suspected)) {
    preferred -= std::count_if(out.begin(), out.begin() + preferred, suspected);
    out.erase(std::remove_if(out.begin(), out.end(), suspected), out.end());
  }
  const size_t drawn = DrawByFreeBytes(cfg.replicas, size, preferred, &out);
  // The fallbacks, emptiest first. Equally empty ranks (the common case: KV blocks have one size,
  // and every rank refills to the high watermark) go to the one that evicted least recently. In
  // rank order the first rank won every such tie: it alone took the new objects and evicted its own
  // LRU, so the pool behaved as an LRU of one rank's size (8 ranks: hit rate 18 % instead of 35 %
  // on the conversation trace, docs/EVAL.md) while the other ranks kept stale objects. Full ties
  // keep rank order (the order `out` has here), as std::stable_sort would, without the buffer it
  // allocates on every put.
  std::sort(out.begin() + drawn, out.end(), [this](Rank a, Rank b) {
    const Segment& sa = segments_.at(a);
    const Segment& sb = segments_.at(b);
    if (sa.alloc.free_bytes() != sb.alloc.free_bytes()) {
      return sa.alloc.free_bytes() > sb.alloc.free_bytes();
    }
    if (sa.evicted_at != sb.evicted_at) return sa.evicted_at < sb.evicted_at;
    return a < b;
  });
}

// "Emptiest first" alone sends every new object to a rank that just joined, until it is as full
// as the others (Mooncake's #2430): a burst of writes then hits one rank's memory bandwidth and
// NIC. So the ranks of the replicas the preferred ones leave are picked by smooth weighted round
// robin over the ranks' free bytes (nginx's: each pick adds every candidate's weight to its
// credit, takes the rank of most credit and charges it the total), the others keeping the
// emptiest-first order behind them. Over any run of puts each rank's share is its share of the
// free bytes, deterministically (the simulator replays the same choices), and spread: ranks of
// equal weight take strict turns, so full ranks at the high watermark still evict in turn and the
// pool keeps the newest objects of all of them, as one LRU would (the tie-break above did that
// when the emptiest rank always won). A rank that cannot hold `size` weighs nothing while another
// can; when none can, the emptiest-first order stands (an allocation will evict there).
size_t MetadataMaster::DrawByFreeBytes(uint32_t replicas, uint64_t size, size_t from,
                                       std::vector<Rank>* candidates) const {
  std::vector<Rank>& out = *candidates;
  const size_t want = std::min<size_t>(std::max<size_t>(from, replicas), out.size());
  for (size_t i = from; i < want; ++i) {
    int64_t total = 0;
    size_t best = out.size();
    const Segment* best_seg = nullptr;
    for (size_t j = i; j < out.size(); ++j) {
      const Segment& seg = segments_.find(out[j])->second;  // a candidate has a segment
      const uint64_t free = seg.alloc.free_bytes();
      if (free < size) continue;
      total += static_cast<int64_t>(free);
      seg.placement_credit += static_cast<int64_t>(free);
      if (best_seg == nullptr || seg.placement_credit > best_seg->placement_credit) {
        best = j;
        best_seg = &seg;
      }
    }
    if (best_seg == nullptr) return i;
    best_seg->placement_credit -= total;
    std::rotate(out.begin() + i, out.begin() + best, out.begin() + best + 1);
  }
  return want;
}

Result<Allocation> MetadataMaster::AllocateOn(Rank rank, Segment& seg, uint64_t size) {
  if (size > seg.alloc.capacity()) {
    return NoSpace("object of " + std::to_string(size) + " B exceeds the segment of " +
                   RankName(rank));
  }
  uint64_t deferred = 0;  // evicted bytes whose region the sink still holds
  kept_last_copy_ = false;
  while (true) {
    auto a = seg.alloc.Allocate(size);
    if (a.ok()) return a;
    if (deferred >= size) {
      return NoSpace(RankName(rank) + ": space is being spilled to the second tier, retry");
    }
    uint64_t before = seg.alloc.free_bytes();
    uint64_t evicted = EvictOne(rank, seg);
    if (evicted == 0 && kept_last_copy_) {
      return NoSpace(RankName(rank) + ": DRAM full (" + std::to_string(seg.alloc.used()) + " of " +
                     std::to_string(seg.alloc.capacity()) + " B) and no object may leave it: " +
                     (sink_ != nullptr ? sink_->WhyDeclined(rank) : "no second tier") +
                     " (store.when_full = keep)");
    }
    if (evicted == 0) return a.status().WithContext(RankName(rank));
    seg.evicted_at = ++eviction_rounds_;
    if (seg.alloc.free_bytes() == before) deferred += evicted;
  }
}

void MetadataMaster::EnforceWatermark(Rank rank, Segment& seg) {
  uint64_t cap = seg.alloc.capacity();
  if (static_cast<double>(seg.alloc.used()) <= cfg_.high_watermark * cap) return;
  uint64_t target = static_cast<uint64_t>(cfg_.evict_fraction * cap);
  uint64_t freed = 0;
  seg.evicted_at = ++eviction_rounds_;
  while (freed < target) {
    uint64_t n = EvictOne(rank, seg);
    if (n == 0) break;
    freed += n;
  }
}

uint64_t MetadataMaster::EvictOne(Rank rank, Segment& seg) {
  // Under kKeep a last copy the sink declined stays where it is and the next one is tried. The
  // sink's bounds are per rank, so a last copy at least as large as a declined one is skipped
  // without asking (a full tier would make every put ask once per object otherwise).
  uint64_t declined = UINT64_MAX;
  const Nanos now = Now();  // once per pass: a pass may walk many leased objects
  for (Lru* list : {&seg.lru, &seg.soft_lru}) {
    for (Lru::Node* n = list->Back(); n != nullptr; n = n->prev) {
      Object* o = n->item;
      if (Leased(*o, now)) continue;  // hard-pinned and in-flight objects are never in a list
      if (o->size >= declined && KeepsLastCopy(*o)) continue;
      PrefetchVictim(n);
      if (uint64_t n = EvictReplica(*o, rank, seg); n > 0) return n;
      declined = std::min(declined, o->size);
    }
  }
  return 0;
}

// Evictions walk the LRU list from the back, usually one victim after another (a watermark pass
// frees 5 % of a rank). A victim's table slot is a cache miss (the object was touched long ago,
// and slots lie in hash order), about 15 % of a put's time when each waits for its own; the
// list nodes and objects lie mostly in allocation order, which the hardware prefetches. So the
// slot of the victim kVictimsAhead places on is fetched now, overlapping the misses.
void MetadataMaster::PrefetchVictim(const Lru::Node* n) const {
  constexpr int kVictimsAhead = 4;
  for (int i = 0; i < kVictimsAhead && n != nullptr; ++i) n = n->prev;
  if (n != nullptr) objects_.Prefetch(n->item->hash);
}

bool MetadataMaster::KeepsLastCopy(const Object& o) const {
  return cfg_.when_full == WhenFull::kKeep && o.replicas.size() == 1 && o.pending_spills == 0;
}

uint64_t MetadataMaster::EvictReplica(Object& o, Rank rank, Segment& seg) {
  auto r = std::find_if(o.replicas.begin(), o.replicas.end(), [&](const Replica& x) {
    return x.loc.rank == rank && x.loc.tier == Tier::kDram && !x.spilling;
  });
  if (r == o.replicas.end()) return 0;
  const uint64_t ticket = next_ticket_++;
  // An object that already has an SSD copy (a promoted one) needs no second spill.
  const bool on_ssd = std::any_of(o.replicas.begin(), o.replicas.end(),
                                  [](const Replica& x) { return x.loc.tier == Tier::kSsd; });
  const bool last_copy = o.replicas.size() == 1 && o.pending_spills == 0;
  // The sink's copy of the key is made only when there is a sink to offer it to (a drop
  // allocates nothing).
  const bool taken =
      sink_ != nullptr && !on_ssd &&
      sink_->OnEvict(EvictedReplica{ticket, o.key, o.put_id, o.size, o.checksum, r->loc});
  if (!taken && KeepsLastCopy(o)) {
    kept_last_copy_ = true;  // it stays in DRAM, visible, at its LRU position
    return 0;
  }
  Unlink(o, *r);
  NoteChanged(o);
  ++stats_.evicted_replicas;
  const uint64_t bytes = r->alloc.size;
  if (taken) {
    // Its bytes stay where they are until CompleteSpill: gets keep reading them (the replica
    // stays in the view, out of the LRU), so a spill never makes an object look missing.
    spills_[ticket] = Spill{o.key, o.put_id, rank, r->alloc};
    r->spilling = true;
    ++o.pending_spills;
    ++stats_.spilled_replicas;
    return bytes;
  }
  (void)seg.alloc.Free(r->alloc);
  if (last_copy) ++stats_.dropped_unspilled;
  o.replicas.erase(r);
  EraseIfEmpty(o);
  return bytes;
}

void MetadataMaster::Unlink(Object& o, Replica& r) {
  if (r.lru == nullptr) return;
  Segment& seg = segments_.at(r.loc.rank);
  (o.soft_pin ? seg.soft_lru : seg.lru).Erase(r.lru);
  r.lru = nullptr;
}

void MetadataMaster::FreeReplica(Object& o, Replica& r) {
  Unlink(o, r);
  if (r.loc.tier != Tier::kDram || r.spilling) return;  // a spill's region: CompleteSpill frees
  auto seg = segments_.find(r.loc.rank);
  if (seg != segments_.end()) (void)seg->second.alloc.Free(r.alloc);
}

void MetadataMaster::EraseObject(Object& o) {
  NoteChanged(o);
  if (o.counted_in_flight) --in_flight_now_;
  for (Replica& r : o.replicas) FreeReplica(o, r);
  UnlinkDeadline(o);
  objects_.Erase(&o);
}

void MetadataMaster::RevokeInFlight(Object& o, std::optional<Rank> dead) {
  for (Replica& r : o.replicas) {
    Unlink(o, r);
    if (r.loc.tier == Tier::kDram && !(dead && r.loc.rank == *dead)) {
      HoldUntil(r.loc.rank, r.alloc, o.put_deadline);
    }
  }
  o.replicas.clear();  // held, or on the dead rank whose segment goes
  EraseObject(o);
}

void MetadataMaster::HoldUntil(Rank rank, const Allocation& alloc, Nanos until) {
  if (until > Now()) {
    held_.emplace(until, std::make_pair(rank, alloc));
    return;
  }
  auto seg = segments_.find(rank);
  if (seg != segments_.end()) (void)seg->second.alloc.Free(alloc);
}

void MetadataMaster::ReleaseHeld() {
  if (held_.empty()) return;
  const Nanos now = Now();
  while (!held_.empty() && held_.begin()->first <= now) {
    auto [rank, alloc] = held_.begin()->second;
    held_.erase(held_.begin());
    auto seg = segments_.find(rank);
    if (seg != segments_.end()) (void)seg->second.alloc.Free(alloc);
  }
}

void MetadataMaster::EraseIfEmpty(Object& o) {
  if (o.replicas.empty() && o.pending_spills == 0) EraseObject(o);
}

void MetadataMaster::MakeVisible(Object& o) {
  o.visible = true;
  NoteChanged(o);
  if (o.counted_in_flight) --in_flight_now_;
  o.counted_in_flight = false;
  UnlinkDeadline(o);
  for (Replica& r : o.replicas) LinkDram(o, r);
}

void MetadataMaster::LinkDram(Object& o, Replica& r) {
  if (o.hard_pin || r.loc.tier != Tier::kDram || r.lru != nullptr) return;
  Lru& list = o.soft_pin ? segments_.at(r.loc.rank).soft_lru : segments_.at(r.loc.rank).lru;
  r.lru = list.PushFront(&o);
}

void MetadataMaster::Touch(Object& o) {
  for (Replica& r : o.replicas) {
    if (r.lru == nullptr) continue;
    Segment& seg = segments_.at(r.loc.rank);
    (o.soft_pin ? seg.soft_lru : seg.lru).MoveToFront(r.lru);
  }
}

Status MetadataMaster::CompleteSpill(uint64_t ticket, std::optional<ReplicaLocation> ssd) {
  auto it = spills_.find(ticket);
  if (it == spills_.end()) return NotFound("no spill with ticket " + std::to_string(ticket));
  Spill spill = std::move(it->second);
  spills_.erase(it);
  auto seg = segments_.find(spill.rank);
  Object* o = Find(spill.key);
  const bool alive = o != nullptr && o->put_id == spill.object_id;
  if (!alive) {
    if (seg != segments_.end()) (void)seg->second.alloc.Free(spill.alloc);
    return NotFound("object '" + spill.key + "' was removed while it spilled");
  }
  Object& obj = *o;
  --obj.pending_spills;
  NoteChanged(obj);
  auto dram = std::find_if(obj.replicas.begin(), obj.replicas.end(), [&](const Replica& x) {
    return x.spilling && x.loc.rank == spill.rank && x.loc.offset == spill.alloc.offset;
  });
  if (ssd) {
    const bool known = std::any_of(obj.replicas.begin(), obj.replicas.end(), [&](const Replica& x) {
      return x.loc.tier == Tier::kSsd && x.loc.rank == ssd->rank && x.loc.offset == ssd->offset;
    });
    if (!known) {
      Replica r;
      r.loc = *ssd;
      r.loc.tier = Tier::kSsd;
      obj.replicas.push_back(r);
      dram = std::find_if(obj.replicas.begin(), obj.replicas.end(), [&](const Replica& x) {
        return x.spilling && x.loc.rank == spill.rank && x.loc.offset == spill.alloc.offset;
      });
    }
  } else if (cfg_.when_full == WhenFull::kKeep) {
    ++stats_.spills_failed_kept;  // the write failed or the tier declined it: it stays in DRAM
  }
  // The DRAM copy stays (a visible replica again, LRU front) when the spill failed under kKeep,
  // or while a lease protects a reader of it (it is on SSD now: its next eviction is a plain
  // drop); otherwise its region is freed.
  const bool keep = (!ssd && cfg_.when_full == WhenFull::kKeep) || Leased(obj);
  if (dram != obj.replicas.end() && keep && seg != segments_.end()) {
    dram->spilling = false;
    LinkDram(obj, *dram);
    return Status::Ok();
  }
  if (seg != segments_.end()) (void)seg->second.alloc.Free(spill.alloc);
  if (dram != obj.replicas.end()) obj.replicas.erase(dram);
  if (!ssd && obj.replicas.empty() && obj.pending_spills == 0) ++stats_.dropped_unspilled;
  EraseIfEmpty(obj);
  return Status::Ok();
}

Status MetadataMaster::AddReplica(const std::string& key, uint64_t size, uint64_t checksum,
                                  const ReplicaLocation& where, uint64_t version) {
  if (where.tier != Tier::kSsd) return InvalidArgument("AddReplica records SSD replicas only");
  if (version != 0) SeedVersion(version + 1);
  Object* o = FindLive(key);
  // Two store ranks recovered different versions of a key: the higher one wins, and the lower
  // one gets a tombstone order, so no later restart can bring it back either.
  if (o != nullptr && o->visible && version != 0 && o->put_id != version) {
    if (o->put_id > version) {
      tombstones_.push_back(TombstoneOrder{where.rank, key, version});
      return {ErrorCode::kAlreadyExists, "replica of '" + key + "' version " +
                                             std::to_string(version) + " is superseded by " +
                                             std::to_string(o->put_id)};
    }
    for (const Replica& r : o->replicas) {
      if (r.loc.tier == Tier::kSsd)
        tombstones_.push_back(TombstoneOrder{r.loc.rank, key, o->put_id});
    }
    EraseObject(*o);
    o = nullptr;
  }
  if (o == nullptr) {
    o = objects_.Insert(key, KeyHash(key));
    o->size = size;
    o->checksum = checksum;
    o->put_id = version != 0 ? version : next_put_id_++;
    o->visible = true;
  } else if (!o->visible) {
    return {ErrorCode::kBusy, "a put of '" + key + "' is in flight"};
  } else if (o->size != size || o->checksum != checksum) {
    return Corrupt("replica of '" + key + "' disagrees with the object's size or checksum");
  }
  for (const Replica& r : o->replicas) {
    if (r.loc == where) return {ErrorCode::kAlreadyExists, "replica of '" + key + "' exists"};
  }
  Replica r;
  r.loc = where;
  o->replicas.push_back(r);
  NoteChanged(*o);
  return Status::Ok();
}

Status MetadataMaster::DropReplica(const std::string& key, const ReplicaLocation& where,
                                   uint64_t version) {
  Object* o = FindLive(key);
  if (o == nullptr || (version != 0 && o->put_id != version)) {
    return NotFound("object '" + key + "'" +
                    (version != 0 ? " version " + std::to_string(version) : ""));
  }
  auto r = std::find_if(o->replicas.begin(), o->replicas.end(), [&](const Replica& x) {
    return x.loc.rank == where.rank && x.loc.tier == where.tier && x.loc.offset == where.offset;
  });
  if (r == o->replicas.end()) return NotFound("replica of '" + key + "'");
  NoteChanged(*o);
  FreeReplica(*o, *r);
  o->replicas.erase(r);
  if (o->visible && o->replicas.empty() && o->pending_spills == 0) ++stats_.dropped_by_tier;
  EraseIfEmpty(*o);
  return Status::Ok();
}

Result<AllocatorStats> MetadataMaster::SegmentStats(Rank rank) const {
  auto it = segments_.find(rank);
  if (it == segments_.end()) return NotFound(RankName(rank) + " has no segment");
  return it->second.alloc.Stats();
}

}  // namespace mooncake::store
