#include "store/master.h"

#include <algorithm>

namespace mooncake::store {

namespace {
Status Busy(std::string m) { return {ErrorCode::kBusy, std::move(m)}; }
Status AlreadyExists(std::string m) { return {ErrorCode::kAlreadyExists, std::move(m)}; }
}  // namespace

MetadataMaster::MetadataMaster(MasterConfig cfg, Clock& clock, EvictionSink* sink)
    : cfg_(cfg),
      clock_(clock),
      sink_(sink),
      next_put_id_(std::max<uint64_t>(cfg.first_version, 1)) {}

void MetadataMaster::Object::Reset() {
  Object fresh;
  fresh.key.swap(key);  // the key's and the replicas' buffers stay for the next key
  fresh.replicas.swap(replicas);
  fresh.replicas.clear();
  *this = std::move(fresh);
}

// Returns the object for `key`, after revoking it if it is a put whose timeout has passed.
MetadataMaster::Object* MetadataMaster::FindLive(std::string_view key, uint64_t hash) {
  Object* found = objects_.Find(key, hash);
  if (found == nullptr) return nullptr;
  Object& o = *found;
  if (!o.visible && o.put_deadline <= Now()) {
    ++stats_.timed_out_puts;
    ++stats_.revoked_puts;
    EraseObject(o);
    return nullptr;
  }
  return &o;
}

Result<std::vector<ReplicaLocation>> MetadataMaster::PutStart(const std::string& key, uint64_t size,
                                                              const ReplicateConfig& cfg) {
  const CallTime now(*this);
  return PutStartHashed(key, KeyHash(key), size, cfg);
}

Result<std::vector<ReplicaLocation>> MetadataMaster::PutStartHashed(const std::string& key,
                                                                    uint64_t hash, uint64_t size,
                                                                    const ReplicateConfig& cfg) {
  std::vector<ReplicaLocation> out;
  MC_RETURN_IF_ERROR(PutStartHashedInto(key, hash, size, cfg, &out));
  return out;
}

Status MetadataMaster::PutStartHashedInto(const std::string& key, uint64_t hash, uint64_t size,
                                          const ReplicateConfig& cfg,
                                          std::vector<ReplicaLocation>* out) {
  if (std::string why = KeyProblem(key); !why.empty()) return InvalidArgument("put: " + why);
  if (size == 0) return InvalidArgument("put of '" + key + "' with size 0");
  if (cfg.replicas == 0) return InvalidArgument("put of '" + key + "' with 0 replicas");
  if (cfg.replicas > segments_.size() + removed_segments_) {
    return InvalidArgument("put of '" + key + "' wants " + std::to_string(cfg.replicas) +
                           " replicas on distinct ranks, but only " +
                           std::to_string(segments_.size()) + " store ranks exist");
  }
  // An existing object is looked at as FindLive would (a timed-out put is revoked, and the key
  // then starts afresh).
  if (Object* old = objects_.Find(key, hash); old != nullptr) {
    if (old->visible) return AlreadyExists("object '" + key + "' exists (objects are immutable)");
    if (old->put_deadline > Now()) return Busy("a put of '" + key + "' is in flight");
    ++stats_.timed_out_puts;
    ++stats_.revoked_puts;
    EraseObject(*old);
  }
  Object& o = *objects_.Insert(key, hash);
  ReleaseHeld();  // a revoked put's regions whose writer's deadline has passed are free again
  o.size = size;
  o.soft_pin = cfg.soft_pin;
  o.hard_pin = cfg.hard_pin;
  o.target_replicas = cfg.replicas;
  // After a rank died (or while one is suspected), fewer ranks may be left than the put asks
  // for: place what fits.
  Candidates(cfg, size, &candidates_);
  const size_t want = std::min<size_t>(cfg.replicas, candidates_.size());
  Status last;  // the last allocation failure; the message is built only when one fails
  for (Rank rank : candidates_) {
    if (o.replicas.size() == want) break;
    auto a = AllocateOn(rank, segments_.at(rank), size);
    if (!a.ok()) {
      last = a.status();
      continue;
    }
    Replica r;
    r.loc = ReplicaLocation{rank, Tier::kDram, a->offset, size};
    r.alloc = *a;
    o.replicas.push_back(r);
  }
  if (o.replicas.size() < want || want == 0) {
    EraseObject(o);
    if (last.ok()) last = NoSpace("no store rank can hold " + std::to_string(size) + " B");
    if (last.code() == ErrorCode::kNoSpace) ++stats_.puts_refused_no_space;
    return last.WithContext("put of '" + key + "'");
  }
  o.put_id = next_put_id_++;
  o.put_deadline = Now() + cfg_.put_timeout;
  o.counted_in_flight = true;
  stats_.in_flight_puts_high_water = std::max(stats_.in_flight_puts_high_water, ++in_flight_now_);
  LinkDeadline(o);
  out->clear();
  for (const Replica& r : o.replicas) out->push_back(r.loc);
  for (const Replica& r : o.replicas) EnforceWatermark(r.loc.rank, segments_.at(r.loc.rank));
  return Status::Ok();
}

Status MetadataMaster::PutEnd(const std::string& key, uint64_t checksum) {
  const CallTime now(*this);
  return PutEndHashed(key, KeyHash(key), checksum);
}

Status MetadataMaster::PutEndHashed(const std::string& key, uint64_t hash, uint64_t checksum) {
  // One lookup; a put past its timeout is revoked here, as FindLive would.
  Object* found = objects_.Find(key, hash);
  if (found == nullptr) return NotFound("no put of '" + key + "' in flight");
  Object& o = *found;
  if (o.visible) return AlreadyExists("object '" + key + "' is already visible");
  if (o.put_deadline <= Now()) {
    ++stats_.timed_out_puts;
    ++stats_.revoked_puts;
    EraseObject(o);
    return Timeout("put of '" + key + "' was revoked after its timeout");
  }
  o.checksum = checksum;
  MakeVisible(o);
  return Status::Ok();
}

Status MetadataMaster::PutRevoke(const std::string& key) {
  const CallTime now(*this);
  Object* o = FindLive(key);
  if (o == nullptr || o->visible) return NotFound("no put of '" + key + "' in flight");
  ++stats_.revoked_puts;
  RevokeInFlight(*o);
  return Status::Ok();
}

Result<ObjectView> MetadataMaster::Get(const std::string& key) {
  const CallTime now(*this);
  return GetHashed(key, KeyHash(key));
}

Result<ObjectView> MetadataMaster::GetHashed(const std::string& key, uint64_t hash) {
  ObjectView v;
  MC_RETURN_IF_ERROR(GetHashedInto(key, hash, &v));
  return v;
}

Status MetadataMaster::GetHashedInto(const std::string& key, uint64_t hash, ObjectView* out) {
  Object* o = FindLive(key, hash);
  if (o == nullptr || !o->visible) return NotFound("object '" + key + "'");
  if (o->replicas.empty()) return NotFound("object '" + key + "' is being spilled");
  Grant(*o);
  bool dram = false;
  for (const Replica& r : o->replicas) dram = dram || r.loc.tier == Tier::kDram;
  if (!dram) {
    ++stats_.ssd_hits;
    ++o->ssd_hits;
    MaybePromote(*o);
  }
  ViewInto(*o, out);
  return Status::Ok();
}

Status MetadataMaster::Exists(const std::string& key) {
  const CallTime now(*this);
  Object* o = FindLive(key);
  if (o == nullptr || !o->visible || o->replicas.empty()) {
    return NotFound("object '" + key + "'");
  }
  Grant(*o);
  return Status::Ok();
}

Result<uint64_t> MetadataMaster::Version(const std::string& key) const {
  const Object* o = Find(key);
  if (o == nullptr || !o->visible) return NotFound("object '" + key + "'");
  return o->put_id;
}

Status MetadataMaster::Remove(const std::string& key) {
  const CallTime now(*this);
  Object* o = FindLive(key);
  if (o == nullptr) return NotFound("object '" + key + "'");
  if (!o->visible) return Busy("a put of '" + key + "' is in flight (revoke it instead)");
  if (Leased(*o)) return Busy("object '" + key + "' is leased");
  // Every rank that holds or is writing an SSD copy of this version gets a tombstone order.
  std::vector<Rank> ranks;
  for (const Replica& r : o->replicas) {
    if (r.loc.tier == Tier::kSsd) ranks.push_back(r.loc.rank);
  }
  if (o->pending_spills > 0) {
    for (const auto& [ticket, sp] : spills_) {
      if (sp.key == key && sp.object_id == o->put_id) ranks.push_back(sp.rank);
    }
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  for (Rank r : ranks) tombstones_.push_back(TombstoneOrder{r, key, o->put_id});
  stats_.tombstones_ordered += ranks.size();
  EraseObject(*o);
  return Status::Ok();
}

std::vector<Result<std::vector<ReplicaLocation>>> MetadataMaster::BatchPutStart(
    std::span<const std::string> keys, std::span<const uint64_t> sizes,
    const ReplicateConfig& cfg) {
  const CallTime now(*this);
  std::vector<Result<std::vector<ReplicaLocation>>> out;
  out.reserve(keys.size());
  HashAndPrefetch(keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i >= sizes.size()) {
      out.push_back(InvalidArgument("batch put-start: fewer sizes than keys"));
    } else {
      out.push_back(PutStartHashed(keys[i], hashes_[i], sizes[i], cfg));
    }
  }
  return out;
}

std::vector<Status> MetadataMaster::BatchPutEnd(std::span<const std::string> keys,
                                                std::span<const uint64_t> checksums) {
  std::vector<Status> out;
  BatchPutEndInto(keys, checksums, &out);
  return out;
}

void MetadataMaster::BatchPutEndInto(std::span<const std::string> keys,
                                     std::span<const uint64_t> checksums,
                                     std::vector<Status>* status) {
  const CallTime now(*this);
  HashAndPrefetch(keys);
  status->resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    (*status)[i] = i < checksums.size()
                       ? PutEndHashed(keys[i], hashes_[i], checksums[i])
                       : InvalidArgument("batch put-end: fewer checksums than keys");
  }
}

std::vector<Result<ObjectView>> MetadataMaster::BatchGet(std::span<const std::string> keys) {
  const CallTime now(*this);
  std::vector<Result<ObjectView>> out;
  out.reserve(keys.size());
  HashAndPrefetch(keys);
  for (size_t i = 0; i < keys.size(); ++i) out.push_back(GetHashed(keys[i], hashes_[i]));
  return out;
}

// A batch's keys are hashed first and their home slots fetched ahead, so the cache misses of a
// large table overlap instead of each lookup waiting for its own.
void MetadataMaster::HashAndPrefetch(std::span<const std::string> keys) {
  hashes_.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    hashes_[i] = KeyHash(keys[i]);
    objects_.Prefetch(hashes_[i]);
  }
}

std::vector<uint8_t> MetadataMaster::BatchExists(std::span<const std::string> keys) {
  const CallTime now(*this);
  std::vector<uint8_t> out(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) out[i] = Exists(keys[i]).ok() ? 1 : 0;
  return out;
}

std::vector<Status> MetadataMaster::BatchRemove(std::span<const std::string> keys) {
  const CallTime now(*this);
  std::vector<Status> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back(Remove(k));
  return out;
}

size_t MetadataMaster::Tick() {
  const CallTime call(*this);
  size_t revoked = 0;
  Nanos now = Now();
  while (deadlines_front_ != nullptr && deadlines_front_->put_deadline <= now) {
    ++stats_.timed_out_puts;
    ++stats_.revoked_puts;
    EraseObject(*deadlines_front_);  // unlinks it
    ++revoked;
  }
  ReleaseHeld();
  return revoked;
}

void MetadataMaster::LinkDeadline(Object& o) {
  // Deadlines are the clock plus one timeout, so a new one goes last; a clock set back (tests,
  // the simulator) walks back to its place.
  Object* after = deadlines_back_;
  while (after != nullptr && after->put_deadline > o.put_deadline) after = after->deadline_prev;
  o.deadline_prev = after;
  o.deadline_next = after != nullptr ? after->deadline_next : deadlines_front_;
  (o.deadline_next != nullptr ? o.deadline_next->deadline_prev : deadlines_back_) = &o;
  (after != nullptr ? after->deadline_next : deadlines_front_) = &o;
  o.in_deadlines = true;
}

void MetadataMaster::UnlinkDeadline(Object& o) {
  if (!o.in_deadlines) return;
  (o.deadline_prev != nullptr ? o.deadline_prev->deadline_next : deadlines_front_) =
      o.deadline_next;
  (o.deadline_next != nullptr ? o.deadline_next->deadline_prev : deadlines_back_) = o.deadline_prev;
  o.deadline_prev = o.deadline_next = nullptr;
  o.in_deadlines = false;
}

MasterStats MetadataMaster::Stats() const {
  MasterStats s = stats_;
  s.objects = 0;
  s.in_flight_puts = 0;
  s.ssd_replicas = 0;
  objects_.ForEach([&s](const Object& o) {
    (o.visible ? s.objects : s.in_flight_puts)++;
    for (const Replica& r : o.replicas) s.ssd_replicas += r.loc.tier == Tier::kSsd ? 1 : 0;
    return true;
  });
  return s;
}

void MetadataMaster::Grant(Object& o) {
  o.lease_until = std::max(o.lease_until, Now() + cfg_.lease);
  Touch(o);
}

ObjectView MetadataMaster::View(const Object& o) const {
  ObjectView v;
  v.replicas.reserve(o.replicas.size());
  ViewInto(o, &v);
  return v;
}

void MetadataMaster::ViewInto(const Object& o, ObjectView* v) const {
  v->size = o.size;
  v->checksum = o.checksum;
  v->version = o.put_id;
  v->lease = cfg_.lease;
  v->replicas.clear();
  for (const Replica& r : o.replicas) v->replicas.push_back(r.loc);
}

}  // namespace mooncake::store
