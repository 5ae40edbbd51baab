// SsdTier: what the live store needs of a store rank's SSD tier (store/ssd/ssd_store_service.h
// spills to it and reads from it). Blocks are written asynchronously and become visible only
// once durable and indexed; a read verifies the block's checksum, so a torn or corrupt block is
// never served. store/hdf5 implements it with HDF5 bucket files (Hdf5Tier); a tier on another
// format (a plain file per bucket, an object store) implements the same three calls.
//
// Threading: every method may be called from any thread; `done` runs on the tier's own thread.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace mooncake::store {

// A block the tier holds: what the master records of an SSD replica.
struct SsdBlock {
  std::string key;
  uint64_t size = 0;
  uint64_t checksum = 0;
  uint64_t location = 0;  // opaque outside the tier (Hdf5Tier: (bucket id << 32) | slot)
};

// What a tier found in its folder when it opened (a restart): the blocks it can serve again,
// and what it had to drop (torn or corrupt slots, files it could not read, left in place).
struct RecoveryReport {
  std::vector<SsdBlock> blocks;
  uint64_t recovered = 0;
  uint64_t dropped = 0;  // slots whose bytes were torn or corrupt, or duplicate keys
  uint32_t files = 0;
  uint32_t unreadable_files = 0;
};

class SsdTier {
 public:
  using SpillDone = std::function<void(Result<SsdBlock>)>;
  virtual ~SsdTier() = default;

  // Queues `bytes` to be written under `key` without copying them: they must stay valid and
  // unchanged until `done` runs (with the block once durable and indexed, or the error).
  // Busy, and `done` is not called, when the tier's queue is full.
  virtual Status TrySpillBorrowed(const std::string& key, std::span<const std::byte> bytes,
                                  uint64_t checksum, SpillDone done) = 0;
  // Reads the block into `out` (at least its size), checksum verified; returns its size.
  virtual Result<uint64_t> Read(const std::string& key, std::span<std::byte> out) = 0;
  // As Read without the checksum check, for a caller that checks the bytes itself against the
  // same checksum (a remote client verifying a staged block end to end): one pass fewer.
  virtual Result<uint64_t> ReadUnverified(const std::string& key, std::span<std::byte> out) {
    return Read(key, out);
  }
  virtual Result<SsdBlock> Lookup(const std::string& key) const = 0;
};

}  // namespace mooncake::store
