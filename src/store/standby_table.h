// StandbyTable: what a standby conductor keeps of the active master (issue 33): the segments and
// the committed (visible) objects, as the active's journal (store/journal.h) says, applied in
// order. On takeover it rebuilds a MetadataMaster from them (RestoreInto); puts the active had
// started and not ended are absent there, so their space is free.
//
// Not thread-safe: the owner (store::StandbyNode) locks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "store/journal.h"
#include "store/master.h"

namespace mooncake::store {

class StandbyTable {
 public:
  // The segments the job starts with (rank, bytes).
  explicit StandbyTable(const std::vector<std::pair<Rank, uint64_t>>& segments = {});

  // Applies the batch's entries numbered from next_seq() on; entries applied before (a batch
  // resent after a lost answer) are skipped. OutOfRange, applying nothing, when the batch starts
  // after next_seq() (an entry would be missing).
  Status Apply(const JournalBatch& batch);
  // The number the next entry must carry.
  uint64_t next_seq() const { return next_seq_; }
  size_t objects() const { return objects_.size(); }
  const std::map<Rank, uint64_t>& segments() const { return segments_; }
  // The committed objects' keys, in no order (a serving standby indexes its prefixes by them).
  std::vector<std::string> keys() const;

  // Adds the segments and the objects to `master` (fresh: no segments, no objects).
  Status RestoreInto(MetadataMaster& master) const;

 private:
  void ApplyOne(const JournalEntry& e);

  std::map<Rank, uint64_t> segments_;
  std::unordered_map<std::string, ObjectRecord> objects_;
  uint64_t next_seq_ = 1;
};

}  // namespace mooncake::store
