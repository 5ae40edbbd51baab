// The active metadata master's journal to its standby (issue 33; docs/FAULTS.md "A standby
// conductor"). What it carries is the committed state, not the calls: after every call that
// changed a visible object, the object's whole record (an upsert) or its absence (an erase), and
// the segments joining or leaving. Replaying the entries in order therefore gives the active's
// table of visible objects, with every DRAM replica's offset, whatever mix of put-ends, removes,
// evictions, spills, copies and rank losses produced it. Puts started and not ended, leases, the
// LRU order and the counters are not journaled: a master rebuilt from the journal has the
// in-flight puts revoked (their space free) and every object freshly unleased.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "common/wire_fields.h"
#include "store/types.h"

namespace mooncake::store {

// A visible object as the master holds it.
struct ObjectRecord {
  std::string key;
  uint64_t size = 0;
  uint64_t checksum = 0;
  uint64_t version = 0;  // ObjectView::version
  uint32_t target_replicas = 1;
  bool soft_pin = false;
  bool hard_pin = false;
  std::vector<ReplicaLocation> replicas;  // DRAM ones at their offsets, SSD ones as recorded
  MC_WIRE_FIELDS(key, size, checksum, version, target_replicas, soft_pin, hard_pin, replicas)
};

enum class JournalOp : uint8_t {
  kUpsert = 0,         // `object` is visible as recorded
  kErase = 1,          // `object.key` is not visible (removed, evicted, lost)
  kAddSegment = 2,     // `rank` holds a segment of `length` bytes
  kRemoveSegment = 3,  // `rank`'s segment is gone (it died or was drained)
  kReset = 4,          // every object is forgotten (MasterService::Reset)
};

struct JournalEntry {
  JournalOp op = JournalOp::kUpsert;
  ObjectRecord object;
  Rank rank;
  uint64_t length = 0;
  MC_WIRE_FIELDS(op, object, rank, length)
};

inline constexpr uint32_t kMaxJournalEntries = 1u << 16;

// One send of the journal (StoreMsg::kJournal). Entries are numbered from 1 over the active's
// life: `first_seq` numbers entries[0]. An empty batch is the active's keepalive; it too is
// refused by a standby that took over ("fenced by epoch E").
struct JournalBatch : WireMessage<JournalBatch> {
  uint64_t epoch = 0;  // informational: the epoch the sender was told (JournalSender::set_epoch)
  uint64_t first_seq = 1;
  std::vector<JournalEntry> entries;
  MC_WIRE_MESSAGE(JournalBatch, epoch, first_seq, entries)
  Status Validate() const;
};

}  // namespace mooncake::store
