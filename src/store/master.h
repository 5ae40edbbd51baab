// MetadataMaster: the store's global index and allocation/eviction policy (Mooncake Store's
// master), as pure logic. It maps object keys to replicas on store ranks, allocates their DRAM,
// grants leases, honours pins and evicts in LRU order. It never touches object bytes and includes
// no MPI, UCX or HDF5: the conductor rank serves it over RPC, and the simulator drives the same
// class on its virtual clock (sim/store_sim.h).
//
// Semantics (DESIGN.md "Store semantics"):
// - Two-phase put: PutStart allocates `replicas` regions on distinct ranks; the client writes them;
//   PutEnd(checksum) makes the object visible. PutRevoke, or `put_timeout` without PutEnd (noticed
//   by Tick() or lazily by the next call on that key), frees the regions. A put revoked before its
//   timeout (PutRevoke, or a rank of it died) may still have writes in flight to its other
//   regions: they go to no new put or copy until the put's timeout has passed (the writer's
//   deadline: a client's writes must end within `put_timeout`).
// - Objects are immutable: PutStart of a visible key is AlreadyExists; of an in-flight key, Busy.
// - Get and Exists take a lease of `lease` (default 10 s) and refresh the LRU position.
// - Re-replication (StartCopies) protects its source as a lease does, until the copy completes
//   or its deadline (`put_timeout` after the order) passes; a failed copy's target region is
//   held until that deadline, as its write may still land.
// - A rank whose usage passes `high_watermark` x capacity after an allocation evicts LRU replicas
//   until at least `evict_fraction` x capacity is freed. Leased, in-flight and hard-pinned objects
//   are never evicted; soft-pinned ones only after every unpinned one. When an allocation does not
//   fit, the rank evicts LRU replicas one at a time until it fits or nothing evictable is left; an
//   object larger than the segment is NoSpace at once and evicts nothing.
// - An evicted replica that is the object's last copy leaves DRAM only into the second tier (the
//   EvictionSink takes it) unless `when_full` is kEvict (a KV cache): under kKeep an object the
//   sink declines, or whose spill fails, stays in DRAM, and a put that then finds no room gets
//   NoSpace naming the rank and why nothing could leave it.
//
// Thread: not thread-safe; the owner serialises calls (the RPC service holds one mutex).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "store/eviction_sink.h"
#include "store/journal.h"
#include "store/object_index.h"
#include "store/segment_allocator.h"
#include "store/types.h"

namespace mooncake::store {

// What happens to an object's last copy when DRAM needs its room and the second tier cannot take
// it (no tier, its spill queue is full, the disk is full, the write failed).
enum class WhenFull : uint8_t {
  kEvict,  // a KV cache: drop it (counted in MasterStats::dropped_unspilled)
  kKeep,   // a store: keep it in DRAM; puts that find no room get NoSpace
};

struct MasterConfig {
  Nanos lease = std::chrono::seconds(10);
  Nanos put_timeout = std::chrono::seconds(30);
  double high_watermark = 0.90;  // of a rank's capacity
  double evict_fraction = 0.05;  // of a rank's capacity, freed per eviction batch
  // Gets served from an SSD replica (no DRAM copy) before the object is promoted back to DRAM
  // on the rank holding the SSD copy; 0 never promotes. Needs a sink that takes promotions.
  uint32_t promote_after = 0;
  WhenFull when_full = WhenFull::kEvict;
  // The first version handed out (ObjectView::version). Versions only grow: every put takes the
  // next one, and SeedVersion() (recovery) lifts the counter above what the SSD folder holds.
  // The app seeds it with the wall clock in nanoseconds (a restart epoch), so a restart's puts
  // outrank blocks and tombstones of earlier runs even before recovery reports arrive.
  uint64_t first_version = 1;
  // How long a rank that a client reported failing (MarkSuspect) gets no new replicas: long
  // enough for the failure detector to declare a dead rank dead (the wiring sets twice
  // cluster.failure_timeout), short enough that a falsely suspected rank is soon used again.
  Nanos suspect_for = std::chrono::seconds(20);
};

// A remove of an object that had (or was writing) an SSD copy: the store rank `rank` must
// persist a tombstone for (key, version) in its tier before the remove is acknowledged, so that
// recovery never brings the removed version back (docs/STORE.md "Versions and tombstones").
struct TombstoneOrder {
  Rank rank;
  std::string key;
  uint64_t version = 0;
};

struct MasterStats {
  uint64_t objects = 0;  // visible
  uint64_t in_flight_puts = 0;
  uint64_t in_flight_puts_high_water = 0;  // the most puts in flight at once
  uint64_t evicted_replicas = 0;           // DRAM replicas evicted (dropped or spilled)
  uint64_t spilled_replicas = 0;           // of those, taken by the sink
  uint64_t revoked_puts = 0;               // by PutRevoke or timeout
  uint64_t timed_out_puts = 0;
  uint64_t ssd_hits = 0;            // gets answered with SSD replicas only
  uint64_t promotions_started = 0;  // orders the sink took
  uint64_t promotions_done = 0;     // CompletePromote(ok)
  uint64_t ssd_replicas = 0;        // current SSD replicas (recorded by spills and recovery)
  uint64_t removed_ranks = 0;       // segments removed because their rank died
  uint64_t objects_lost = 0;        // visible objects whose every replica was on removed ranks
  uint64_t copies_started = 0;      // re-replication orders handed out (StartCopies)
  uint64_t rereplicated = 0;        // of those, completed: a new DRAM replica is visible
  // Visible objects gone without a Remove, by cause (objects_lost above: a rank died):
  uint64_t dropped_unspilled = 0;  // kEvict: last copy evicted from DRAM, no durable spill
  uint64_t dropped_by_tier = 0;    // last copy dropped by the second tier (its own LRU)
  // kKeep: spills that failed (or the tier declined) whose bytes became a DRAM replica again
  // (back-pressure: nothing lost, the room stays taken).
  uint64_t spills_failed_kept = 0;
  uint64_t puts_refused_no_space = 0;  // PutStart answered NoSpace
  uint64_t tombstones_ordered = 0;     // TombstoneOrders handed out by removes
};

// A re-replication order: copy the object's bytes from `from` (a surviving replica) to the
// region reserved at `to`, check them against `checksum`, then CompleteCopy(ticket, ok).
struct CopyOrder {
  uint64_t ticket = 0;
  std::string key;
  ReplicaLocation from, to;
  uint64_t checksum = 0;
  // The copier gives up this long after StartCopies returned: until then the source is kept
  // and, after a failed copy, the target region is reserved (a late read or write may land).
  Nanos timeout{0};
};

class MetadataMaster {
 public:
  // `clock` and `sink` (may be null: evictions drop) must outlive the master.
  MetadataMaster(MasterConfig cfg, Clock& clock, EvictionSink* sink = nullptr);

  // Segments. AlreadyExists when `rank` is registered. RemoveSegment (a rank died) drops its
  // replicas, revokes in-flight puts that had one there, and removes objects left with none.
  // After a removal, puts place min(replicas, live ranks) replicas (degraded, not refused).
  Status AddSegment(Rank rank, uint64_t capacity);
  // `lost` (optional) receives the keys of visible objects left with no replica at all.
  Status RemoveSegment(Rank rank, std::vector<std::string>* lost = nullptr);

  // A client found `rank` failing (a write to it failed with PeerFailure) before the failure
  // detector declared it dead: for `suspect_for`, puts and re-replication place no replica
  // there while any unsuspected rank is left, so a put retried at once lands elsewhere.
  // RemoveSegment clears the mark. Returns whether the rank was not suspected already; NotFound
  // when `rank` has no segment.
  Result<bool> MarkSuspect(Rank rank);

  // Drains (a store rank leaves with nothing lost). BeginDrain: puts, copies and promotions
  // place nothing new on `rank`; StartCopies orders, for every visible object with a DRAM
  // replica there and fewer than its put's replica count elsewhere, a copy to another rank, and
  // drops the replicas there of objects that have them elsewhere (their regions are held while a
  // get's lease or a copy may still read them). NotFound when `rank` has no segment.
  Status BeginDrain(Rank rank);
  struct DrainState {
    uint64_t dram_replicas = 0;  // visible objects' DRAM replicas still there
    uint64_t ssd_replicas = 0;   // SSD copies recorded there (a drain does not move them)
    uint64_t used_bytes = 0;     // its segment's allocated bytes (replicas, held regions, spills)
    bool drained() const { return dram_replicas == 0 && ssd_replicas == 0 && used_bytes == 0; }
  };
  // What a draining rank still holds (frees held regions whose time has passed first). Walks
  // every object. NotFound when `rank` has no segment, InvalidArgument when it is not draining.
  Result<DrainState> Drain(Rank rank);
  // The drained rank leaves: its segment is removed (not counted as a rank loss).
  // InvalidArgument when it is not draining, Busy while it still holds anything.
  Status RemoveDrained(Rank rank);

  // Re-replication after a rank loss: up to `max_orders` visible objects holding fewer DRAM
  // replicas than their put asked for get a region reserved on another live rank (within
  // capacity, no eviction), and the source is protected like a leased object until the copy
  // completes or its deadline (CopyOrder::timeout) passes, so neither goes away during the copy.
  std::vector<CopyOrder> StartCopies(size_t max_orders);
  // With `ok` the reserved region becomes a visible replica; otherwise it is freed once the
  // copy's deadline has passed. NotFound when the ticket is unknown or the object went away.
  Status CompleteCopy(uint64_t ticket, bool ok);

  Result<std::vector<ReplicaLocation>> PutStart(const std::string& key, uint64_t size,
                                                const ReplicateConfig& cfg);
  Status PutEnd(const std::string& key, uint64_t checksum);
  Status PutRevoke(const std::string& key);
  Result<ObjectView> Get(const std::string& key);
  // OK when visible, NotFound otherwise.
  Status Exists(const std::string& key);
  // The visible object's version, without a lease or an LRU touch (tests, tools).
  Result<uint64_t> Version(const std::string& key) const;
  // Busy while leased or in flight. An object with SSD copies (or spills in flight) leaves
  // TombstoneOrders for TakeTombstones(): the caller acknowledges the remove only once they are
  // written.
  Status Remove(const std::string& key);
  std::vector<TombstoneOrder> TakeTombstones() { return std::move(tombstones_); }

  std::vector<Result<std::vector<ReplicaLocation>>> BatchPutStart(std::span<const std::string> keys,
                                                                  std::span<const uint64_t> sizes,
                                                                  const ReplicateConfig& cfg);
  // BatchPutStart for a hot caller that reuses its buffers: key i's status goes to (*status)[i]
  // and, when OK, its replicas into *replicas_at(i) (cleared first; one with room allocates
  // nothing). Vectors of keys that failed are left as they were.
  template <typename ReplicasAt>
  void BatchPutStartInto(std::span<const std::string> keys, std::span<const uint64_t> sizes,
                         const ReplicateConfig& cfg, std::vector<Status>* status,
                         ReplicasAt&& replicas_at) {
    const CallTime now(*this);
    HashAndPrefetch(keys);
    status->resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      (*status)[i] = i < sizes.size()
                         ? PutStartHashedInto(keys[i], hashes_[i], sizes[i], cfg, replicas_at(i))
                         : InvalidArgument("batch put-start: fewer sizes than keys");
    }
  }
  std::vector<Status> BatchPutEnd(std::span<const std::string> keys,
                                  std::span<const uint64_t> checksums);
  // BatchPutEnd into a reused vector of statuses.
  void BatchPutEndInto(std::span<const std::string> keys, std::span<const uint64_t> checksums,
                       std::vector<Status>* status);
  std::vector<Result<ObjectView>> BatchGet(std::span<const std::string> keys);
  // BatchGet for a hot caller that reuses its buffers: key i's status goes to (*status)[i] and,
  // when OK, its view into *view_at(i), assigned in place (a view whose replica vector has
  // room allocates nothing). Views of keys that failed are left as they were.
  template <typename ViewAt>
  void BatchGetInto(std::span<const std::string> keys, std::vector<Status>* status,
                    ViewAt&& view_at) {
    const CallTime now(*this);
    HashAndPrefetch(keys);
    status->resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      (*status)[i] = GetHashedInto(keys[i], hashes_[i], view_at(i));
    }
  }
  // One byte per key: 1 when visible (and now leased), 0 otherwise.
  std::vector<uint8_t> BatchExists(std::span<const std::string> keys);
  std::vector<Status> BatchRemove(std::span<const std::string> keys);

  // Second tier. CompleteSpill ends an eviction the sink took: frees the DRAM region and, with
  // `ssd`, records it as a replica (NotFound when the object is gone: the tier should drop it).
  Status CompleteSpill(uint64_t ticket, std::optional<ReplicaLocation> ssd);
  // A replica that appeared outside a put (SSD blocks recovered after a restart, promotions).
  // Creates a visible object when `key` is unknown; Corrupt when the checksum disagrees.
  // `version` (0: take a new one) is the block's version: versions above the counter lift it;
  // a higher version than the known object's replaces that object (another rank recovered an
  // older incarnation), a lower one is AlreadyExists ("superseded") and not recorded; either way
  // the losing version's SSD copies get TombstoneOrders (TakeTombstones).
  Status AddReplica(const std::string& key, uint64_t size, uint64_t checksum,
                    const ReplicaLocation& where, uint64_t version = 0);
  // A tier dropped its copy (e.g. the SSD tier's own LRU). DRAM regions are freed. With a
  // `version` (not 0), NotFound unless the object is that version.
  Status DropReplica(const std::string& key, const ReplicaLocation& where, uint64_t version = 0);
  // Versions handed out from now on are at least `next` (recovery: above every version found
  // on disk, blocks and tombstones alike).
  void SeedVersion(uint64_t next) { next_put_id_ = std::max(next_put_id_, next); }
  // Ends a promotion the sink took: with `ok` the reserved DRAM region becomes a visible replica
  // (LRU front); otherwise it is freed. NotFound when the ticket is unknown or the object went
  // away (the region is freed either way).
  Status CompletePromote(uint64_t ticket, bool ok);
  // Replaces the sink (null: evictions drop). Call while no eviction is in progress.
  void SetSink(EvictionSink* sink) { sink_ = sink; }

  // Revokes puts whose timeout has passed (returns how many) and frees the regions of revoked
  // puts and failed copies whose writers' deadlines have passed.
  size_t Tick();

  Result<AllocatorStats> SegmentStats(Rank rank) const;
  MasterStats Stats() const;

  // The journal to a standby (store/journal.h). With tracking on, every call that makes an
  // object visible, changes a visible object's replicas or erases it notes the key; TakeChanges
  // appends one entry per key noted since its last call: an upsert of the object as it is now,
  // or an erase when it is not visible any more. Off by default (a master without a standby
  // pays nothing).
  void TrackChanges(bool on) { track_changes_ = on; }
  bool has_changes() const { return !changed_.empty() || !segment_changes_.empty(); }
  void TakeChanges(std::vector<JournalEntry>* out);
  // The standby's rebuild: `objects` become visible as recorded, every DRAM replica at its
  // offset (SegmentAllocator::AllocateAt), unleased, in no particular LRU order; versions go on
  // above the highest. Call on a master with its segments and no objects. InvalidArgument
  // naming the key when a replica's rank has no segment or two replicas' regions overlap.
  Status Restore(std::vector<ObjectRecord> objects);
  // Every visible object's record (tests compare an active and a rebuilt master).
  std::vector<ObjectRecord> Records() const;

 private:
  struct Object;
  using Lru = LruList<Object>;
  struct Replica {
    ReplicaLocation loc;
    Allocation alloc;          // DRAM only
    Lru::Node* lru = nullptr;  // in its segment's list: DRAM and visible and not hard-pinned
    bool spilling = false;     // DRAM, handed to the sink: still served, freed by CompleteSpill
  };
  // Lives in objects_ (ObjectTable): its address is stable until erased, and an erased one is
  // reused by a later key with its key's and replicas' capacity (Reset keeps them).
  struct Object {
    std::string key;
    uint64_t hash = 0;      // KeyHash(key)
    uint32_t index_id = 0;  // its id in objects_
    // The in-flight puts, by put deadline (Tick walks it from the front); null at the ends.
    Object* deadline_prev = nullptr;
    Object* deadline_next = nullptr;
    bool in_deadlines = false;
    uint64_t size = 0;
    uint64_t checksum = 0;
    bool visible = false;
    bool soft_pin = false;
    bool hard_pin = false;
    Nanos lease_until{0};
    Nanos copy_until{0};  // a CopyOrder reads a replica of it until then (or CompleteCopy)
    uint64_t put_id = 0;  // the object's version: names this incarnation of the key
    Nanos put_deadline{0};
    uint32_t pending_spills = 0;
    uint32_t ssd_hits = 0;           // since the last promotion
    bool promoting = false;          // a PromotionOrder is out
    bool copying = false;            // a CopyOrder is out
    uint32_t target_replicas = 1;    // what its put asked for (re-replication restores it)
    bool counted_in_flight = false;  // in in_flight_now_ (a put started, not yet visible)
    std::vector<Replica> replicas;
    void Reset();  // everything but key and replicas' capacity to its initial value
  };
  struct Segment {
    explicit Segment(uint64_t capacity) : alloc(capacity) {}
    SegmentAllocator alloc;
    Lru lru;                  // front = most recently used
    Lru soft_lru;             // soft-pinned objects, evicted after `lru` is exhausted
    uint64_t evicted_at = 0;  // eviction_rounds_ when this rank last evicted (0: never)
    bool draining = false;    // BeginDrain: no new replicas; its objects move elsewhere
    // DrawByFreeBytes' smooth weighted round robin: free bytes owed to this rank in picks.
    mutable int64_t placement_credit = 0;
  };
  struct Spill {
    std::string key;
    uint64_t object_id = 0;  // the object's put_id: a re-put of the key is another object
    Rank rank;
    Allocation alloc;
    Nanos deadline{0};  // copies only: the copier's deadline
  };

  // Now() is the time of the public call in progress: each call reads the clock once (a
  // CallTime on its stack), and its keys, deadlines, leases and evictions all use that instant.
  // Reading it per key and per step was about a quarter of the master's CPU time (about 30 ns a
  // read on the VM). Outside a call (and from the calls that keep no CallTime) Now() reads the
  // clock. Nested CallTimes keep the outermost one's instant.
  class CallTime {
   public:
    explicit CallTime(const MetadataMaster& m) : m_(m) {
      if (m_.call_depth_++ == 0) m_.call_now_ = m_.clock_.Now();
    }
    ~CallTime() { --m_.call_depth_; }
    CallTime(const CallTime&) = delete;
    CallTime& operator=(const CallTime&) = delete;

   private:
    const MetadataMaster& m_;
  };
  Nanos Now() const { return call_depth_ > 0 ? call_now_ : clock_.Now(); }

  // The single-key calls with the key's hash already computed (the batch calls hash ahead).
  Result<std::vector<ReplicaLocation>> PutStartHashed(const std::string& key, uint64_t hash,
                                                      uint64_t size, const ReplicateConfig& cfg);
  // `out` receives the replicas (cleared first) when OK.
  Status PutStartHashedInto(const std::string& key, uint64_t hash, uint64_t size,
                            const ReplicateConfig& cfg, std::vector<ReplicaLocation>* out);
  Status PutEndHashed(const std::string& key, uint64_t hash, uint64_t checksum);
  Result<ObjectView> GetHashed(const std::string& key, uint64_t hash);
  Status GetHashedInto(const std::string& key, uint64_t hash, ObjectView* out);
  void HashAndPrefetch(std::span<const std::string> keys);  // fills hashes_
  Object* FindLive(std::string_view key, uint64_t hash);
  Object* FindLive(std::string_view key) { return FindLive(key, KeyHash(key)); }
  Object* Find(std::string_view key) const { return objects_.Find(key, KeyHash(key)); }
  void LinkDeadline(Object& o);  // into the in-flight list, in deadline order
  void UnlinkDeadline(Object& o);
  void MaybePromote(Object& o);
  void LinkDram(Object& o, Replica& r);
  // A promotion or a copy that ended: its bookkeeping, its object when that is still the put it
  // was for (else nullptr; the object's `in_flight` flag is cleared), the target rank's segment
  // when that rank is still a store rank (else nullptr).
  struct EndedTransfer {
    Spill spill;
    Object* object = nullptr;
    Segment* segment = nullptr;
  };
  // Takes transfer `ticket` out of `pending`; NotFound naming `what` when there is none.
  Result<EndedTransfer> TakeTransfer(std::unordered_map<uint64_t, Spill>& pending, uint64_t ticket,
                                     const char* what, bool Object::*in_flight);
  // A transfer's object when that is still the put the transfer was for, else nullptr.
  Object* TransferObject(const Spill& transfer) const;
  // Forgets the transfers of `pending` to or from `rank` (it died); `still_there` runs for each
  // whose object is still the put it was for.
  void DropTransfersTo(std::unordered_map<uint64_t, Spill>& pending, Rank rank,
                       const std::function<void(Object&, const Spill&)>& still_there);
  // The region `alloc` on `rank` becomes a DRAM replica of `obj`.
  void AddDramReplica(Object& obj, Rank rank, const Allocation& alloc);
  // A reader holds it: a get's lease, or a copy reading a replica of it (StartCopies).
  bool Leased(const Object& o) const { return Leased(o, Now()); }
  static bool Leased(const Object& o, Nanos now) {
    return o.lease_until > now || o.copy_until > now;
  }
  void Touch(Object& o);
  void Grant(Object& o);
  ObjectView View(const Object& o) const;
  void ViewInto(const Object& o, ObjectView* v) const;  // View, reusing v's replica vector
  // Preferred ranks; then, for the replicas they leave, ranks picked in proportion to their free
  // bytes (DrawByFreeBytes); then the others emptiest first, among equally empty ones the rank
  // that evicted least recently first (see the .cc). Suspected ranks (MarkSuspect) are left out
  // unless every rank is suspected; draining ones (BeginDrain) always. Fills `candidates` (its
  // old contents go; a reused vector saves an allocation per put).
  void Candidates(const ReplicateConfig& cfg, uint64_t size, std::vector<Rank>* candidates) const;
  // Puts the ranks of the replicas after the `from` preferred ones first, picked by smooth
  // weighted round robin over their free bytes (see the .cc). Returns the end of what it placed.
  size_t DrawByFreeBytes(uint32_t replicas, uint64_t size, size_t from,
                         std::vector<Rank>* candidates) const;
  Result<Allocation> AllocateOn(Rank rank, Segment& seg, uint64_t size);
  void EnforceWatermark(Rank rank, Segment& seg);
  // Bytes of the evicted replica's region; 0 when nothing on `rank` is evictable.
  uint64_t EvictOne(Rank rank, Segment& seg);
  // 0 when the replica stays (kKeep: the sink declined the object's last copy).
  uint64_t EvictReplica(Object& o, Rank rank, Segment& seg);
  bool KeepsLastCopy(const Object& o) const;
  void PrefetchVictim(const Lru::Node* n) const;  // a later victim's table slot (see the .cc)
  void Unlink(Object& o, Replica& r);
  void FreeReplica(Object& o, Replica& r);
  void EraseObject(Object& o);  // frees DRAM of every replica, then erases
  // A put revoked before its timeout: its DRAM regions (except on `dead`) are held until the
  // put's deadline, as its writer may still be writing them; then erases it.
  void RevokeInFlight(Object& o, std::optional<Rank> dead = std::nullopt);
  // Frees `alloc` on `rank` once `until` has passed (at once when it has).
  void HoldUntil(Rank rank, const Allocation& alloc, Nanos until);
  void ReleaseHeld();  // frees held regions whose time has passed
  void EraseIfEmpty(Object& o);
  void MakeVisible(Object& o);
  bool Draining(Rank rank) const;
  void EraseSegment(Rank rank);  // and its suspicion; journaled
  void NoteChanged(const Object& o) {
    if (track_changes_ && o.visible) changed_.push_back(o.key);
  }
  void NoteSegment(JournalOp op, Rank rank, uint64_t length = 0) {
    if (!track_changes_) return;
    JournalEntry e;
    e.op = op;
    e.rank = rank;
    e.length = length;
    segment_changes_.push_back(std::move(e));
  }
  ObjectRecord RecordOf(const Object& o) const;
  // StartCopies: drops the replicas on draining ranks of objects replicated enough elsewhere.
  void ReleaseDrained();

  MasterConfig cfg_;
  Clock& clock_;
  EvictionSink* sink_;
  ObjectTable<Object> objects_;
  std::map<Rank, Segment> segments_;
  std::map<Rank, Nanos> suspect_until_;  // MarkSuspect: no new replicas there until then
  Object* deadlines_front_ = nullptr;    // in-flight puts, earliest deadline first
  Object* deadlines_back_ = nullptr;
  std::unordered_map<uint64_t, Spill> spills_;
  std::unordered_map<uint64_t, Spill> promotions_;  // same bookkeeping: the reserved region
  std::unordered_map<uint64_t, Spill> copies_;      // re-replication: the reserved region
  // Regions a revoked put's writer or a failed copy may still write, by the time they are free.
  std::multimap<Nanos, std::pair<Rank, Allocation>> held_;
  uint32_t removed_segments_ = 0;
  uint32_t draining_ = 0;                   // segments draining (BeginDrain)
  uint64_t eviction_rounds_ = 0;            // watermark or allocation evictions, over all ranks
  uint64_t next_put_id_ = 1;                // the next version (MasterConfig::first_version)
  std::vector<TombstoneOrder> tombstones_;  // from Remove, until TakeTombstones
  uint64_t in_flight_now_ = 0;              // puts started and not yet visible or gone
  uint64_t next_ticket_ = 1;
  MasterStats stats_;
  std::vector<Rank> candidates_;  // PutStart's scratch for Candidates
  std::vector<uint64_t> hashes_;  // the batch calls' key hashes (HashAndPrefetch)
  bool kept_last_copy_ = false;   // AllocateOn: an eviction kept a last copy (names the NoSpace)
  mutable Nanos call_now_{0};     // CallTime: the clock read of the call in progress
  mutable int call_depth_ = 0;    // CallTimes alive (nested calls keep the outer instant)
  bool track_changes_ = false;    // TrackChanges
  std::vector<std::string> changed_;           // keys noted since the last TakeChanges
  std::vector<JournalEntry> segment_changes_;  // segments added or removed since then
};

}  // namespace mooncake::store
