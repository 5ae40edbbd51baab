// MetadataMaster: the journal to a standby and the standby's rebuild (store/journal.h).
#include <algorithm>

#include "store/master.h"

namespace mooncake::store {
namespace {

// The fields a journal record and the master's object hold alike, as pairs (record's, object's):
// the journal writes them one way and the rebuild reads them back the other.
template <typename Record, typename Object, typename Visit>
void SharedFields(Record& r, Object& o, Visit&& visit) {
  visit(r.size, o.size);
  visit(r.checksum, o.checksum);
  visit(r.version, o.put_id);
  visit(r.target_replicas, o.target_replicas);
  visit(r.soft_pin, o.soft_pin);
  visit(r.hard_pin, o.hard_pin);
}

}  // namespace

ObjectRecord MetadataMaster::RecordOf(const Object& o) const {
  ObjectRecord r;
  r.key = o.key;
  SharedFields(r, o, [](auto& record, const auto& object) { record = object; });
  r.replicas.reserve(o.replicas.size());
  for (const Replica& x : o.replicas) r.replicas.push_back(x.loc);
  return r;
}

// A key noted twice in one call gets one entry: the record says how it is now, so the order of
// the notes does not matter.
void MetadataMaster::TakeChanges(std::vector<JournalEntry>* out) {
  for (JournalEntry& e : segment_changes_) out->push_back(std::move(e));
  segment_changes_.clear();
  if (changed_.empty()) return;
  if (changed_.size() > 1) {
    std::sort(changed_.begin(), changed_.end());
    changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
  }
  for (std::string& key : changed_) {
    JournalEntry e;
    const Object* o = Find(key);
    if (o != nullptr && o->visible) {
      e.op = JournalOp::kUpsert;
      e.object = RecordOf(*o);
    } else {
      e.op = JournalOp::kErase;
      e.object.key = std::move(key);
    }
    out->push_back(std::move(e));
  }
  changed_.clear();
}

std::vector<ObjectRecord> MetadataMaster::Records() const {
  std::vector<ObjectRecord> out;
  objects_.ForEach([&](const Object& o) {
    if (o.visible) out.push_back(RecordOf(o));
    return true;
  });
  return out;
}

Status MetadataMaster::Restore(std::vector<ObjectRecord> objects) {
  const CallTime now(*this);
  // Every DRAM region first, per segment in ascending offset order: AllocateAt then finds each
  // one in the free tail the previous one left, instead of scanning the segment's blocks.
  struct Region {
    Rank rank;
    uint64_t offset = 0, length = 0;
    size_t object = 0, replica = 0;
  };
  std::vector<Region> regions;
  std::vector<std::vector<Allocation>> allocs(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    allocs[i].resize(objects[i].replicas.size());
    for (size_t j = 0; j < objects[i].replicas.size(); ++j) {
      const ReplicaLocation& r = objects[i].replicas[j];
      if (r.tier == Tier::kDram) regions.push_back(Region{r.rank, r.offset, r.length, i, j});
    }
  }
  std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.offset < b.offset;
  });
  for (const Region& g : regions) {
    const std::string& key = objects[g.object].key;
    auto seg = segments_.find(g.rank);
    if (seg == segments_.end()) {
      return InvalidArgument("restoring '" + key + "': store rank " + std::to_string(g.rank.value) +
                             " has no segment");
    }
    auto a = seg->second.alloc.AllocateAt(g.offset, g.length);
    if (!a.ok()) {
      return a.status().WithContext("restoring '" + key + "' on store rank " +
                                    std::to_string(g.rank.value) + " (overlaps another object)");
    }
    allocs[g.object][g.replica] = *a;
  }
  for (size_t i = 0; i < objects.size(); ++i) {
    ObjectRecord& rec = objects[i];
    const uint64_t hash = KeyHash(rec.key);
    if (objects_.Find(rec.key, hash) != nullptr) {
      return InvalidArgument("restoring '" + rec.key + "': the key is there twice");
    }
    Object& o = *objects_.Insert(rec.key, hash);
    SharedFields(rec, o, [](const auto& record, auto& object) { object = record; });
    o.visible = true;
    for (size_t j = 0; j < rec.replicas.size(); ++j) {
      Replica r;
      r.loc = rec.replicas[j];
      if (r.loc.tier == Tier::kDram) r.alloc = allocs[i][j];
      o.replicas.push_back(r);
    }
    for (Replica& r : o.replicas) LinkDram(o, r);
    SeedVersion(rec.version + 1);
  }
  return Status::Ok();
}

}  // namespace mooncake::store
