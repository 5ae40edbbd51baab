// SsdTier: what the live store needs of a store rank's SSD tier (store/ssd/ssd_store_service.h
// spills to it and reads from it). Blocks are written asynchronously and become visible only
// once durable and indexed; a read verifies the block's checksum, so a torn or corrupt block is
// never served. store/hdf5 implements it with HDF5 bucket files (Hdf5Tier); a tier on another
// format (a plain file per bucket, an object store) implements the same calls.
//
// Identity: a block is (key, version) (versions come from the master, ObjectView::version). The
// tier holds at most one version per key, the highest it was given; a read names the version
// and a different one is NotFound, never served. Tombstone(key, version) persists that every
// version up to `version` was removed; recovery keeps, per key, the highest version above the
// key's highest tombstone (docs/STORE.md "Versions and tombstones").
//
// Threading: every method may be called from any thread; `done` runs on the tier's own thread.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/wire_fields.h"

namespace mooncake::store {

// A block the tier holds: what the master records of an SSD replica.
struct SsdBlock {
  std::string key;
  uint64_t version = 0;
  uint64_t size = 0;
  uint64_t checksum = 0;
  uint64_t location = 0;  // opaque outside the tier (Hdf5Tier: (bucket id << 32) | slot)
  MC_WIRE_FIELDS(key, version, size, checksum, location)  // the master hears of it so
};

// What a tier's scan of its folder counted: a RecoveryReport's counters, and what a store rank
// reports of them to the master (RecoveredBlocks, store/net/ssd_messages.h).
struct RecoveryCounts {
  uint64_t dropped = 0;             // the sum of the three reasons below
  uint64_t dropped_torn = 0;        // bytes or key failed their checksum, or a range is outside
  uint64_t dropped_superseded = 0;  // a higher version of the key is on disk
  uint64_t dropped_tombstoned = 0;  // removed: a tombstone covers the version
  uint64_t tombstones = 0;          // tombstone slots read
  // Over every block and tombstone read: the master's versions go above it.
  uint64_t max_version = 0;
  uint32_t files = 0;
  // Files whose HDF5 metadata or index could not be read: every block in them is lost (how many
  // is unknown); each is named in RecoveryReport::file_notes.
  uint32_t unreadable_files = 0;
};

// What a tier found in its folder when it opened (a restart): the blocks it can serve again,
// and every block it dropped, by reason (the counts). Files are left in place.
struct RecoveryReport : RecoveryCounts {
  std::vector<SsdBlock> blocks;
  uint64_t recovered = 0;
  // One line per file that lost anything: the file, what was dropped and why (logged at the
  // default level by the store rank).
  std::vector<std::string> file_notes;
};

class SsdTier {
 public:
  using SpillDone = std::function<void(Result<SsdBlock>)>;
  virtual ~SsdTier() = default;

  // Queues `bytes` to be written as (key, version) without copying them: they must stay valid
  // and unchanged until `done` runs (with the block once durable and indexed, or the error).
  // Busy, and `done` is not called, when the tier's queue is full. The same (key, version)
  // already held is not written again; an older version than the one held, or one a tombstone
  // covers, fails with AlreadyExists.
  virtual Status TrySpillBorrowed(const std::string& key, uint64_t version,
                                  std::span<const std::byte> bytes, uint64_t checksum,
                                  SpillDone done) = 0;
  // Reads the block into `out` (at least its size), checksum verified; returns its size.
  // NotFound when the tier holds no block of that version.
  virtual Result<uint64_t> Read(const std::string& key, uint64_t version,
                                std::span<std::byte> out) = 0;
  // As Read without the checksum check, for a caller that checks the bytes itself against the
  // same checksum (a remote client verifying a staged block end to end): one pass fewer.
  virtual Result<uint64_t> ReadUnverified(const std::string& key, uint64_t version,
                                          std::span<std::byte> out) {
    return Read(key, version, out);
  }
  virtual Result<SsdBlock> Lookup(const std::string& key, uint64_t version) const = 0;
  // Persists a tombstone for (key, version): the block of that version or older is no longer
  // served, and recovery never brings it back. Returns once the tombstone is durable (written
  // and flushed like a block); blocks the caller meanwhile.
  virtual Status Tombstone(const std::string& key, uint64_t version) = 0;
};

}  // namespace mooncake::store
