// SsdStoreService: what a store rank does for the SSD tier of the live store. It serves
//   kSpill   (from the master): write blocks of its own DRAM segment to its SsdTier, zero-copy
//            (the master keeps those regions reserved until it hears back); the answer is sent
//            from the tier's writer thread once every block of the request is durable, or at
//            once for blocks refused because the tier's bounded queue is full (Busy: the master
//            then drops them from DRAM, as without a tier).
//   kPromote (from the master): copy blocks from the tier into reserved regions of the segment.
//   kSsdRead (from a client): answer the blocks' bytes over the RPC (checksum verified by the
//            tier). Blocks here are KV-block sized; a request is capped at kMaxSsdReadBytes.
// and tells the master (one-way kSsdDrop) when the tier's own LRU deletes blocks.
//
// Threading: handlers run on the Rpc dispatcher; spill answers on the tier's writer thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "common/ids.h"
#include "store/net/ssd_messages.h"
#include "store/ssd_tier.h"
#include "transport/rpc.h"

namespace mooncake::store {

struct SsdStoreStats {
  uint64_t spilled = 0;         // blocks written on the master's request
  uint64_t spills_refused = 0;  // queue full (Busy)
  uint64_t spill_errors = 0;    // write failed
  uint64_t promoted = 0;        // blocks copied back into DRAM
  uint64_t reads_served = 0;    // blocks answered to kSsdRead
  uint64_t read_failures = 0;   // of those, NotFound or Corrupt (never served)
  uint64_t dropped_by_lru = 0;  // reported to the master
};

class SsdStoreService {
 public:
  // `rpc`, `tier` and the segment memory must outlive the service; `master` is the conductor.
  SsdStoreService(transport::Rpc& rpc, SsdTier& tier, std::span<std::byte> segment, Rank master);

  // Registers the handlers (before peers may call).
  void Start();
  // Forward a block the tier's LRU deleted to the master (wire as the tier's on-drop callback, e.g.
  // Hdf5TierOptions::on_drop_block; runs on the writer thread).
  void OnTierDrop(const SsdBlock& block);
  SsdStoreStats Stats() const;

  // Test hook: runs on the writer thread after each block the tier made durable on a kSpill
  // (before the answer is sent). May not return (a crash test raises SIGKILL here).
  std::function<void(const std::string& key)> on_spilled;

 private:
  void Spill(std::span<const std::byte> request, transport::Responder responder);
  Result<std::vector<std::byte>> Promote(std::span<const std::byte> request);
  Result<std::vector<std::byte>> Read(std::span<const std::byte> request);
  Status CheckRange(uint64_t offset, uint64_t length) const;

  transport::Rpc& rpc_;
  SsdTier& tier_;
  std::span<std::byte> segment_;
  Rank master_;
  std::atomic<uint64_t> spilled_{0}, refused_{0}, spill_errors_{0}, promoted_{0}, reads_{0},
      read_failures_{0}, dropped_{0};
};

// The store rank's RecoveryReport in wire form, for the conductor.
RecoveredBlocks ToRecoveredBlocks(const RecoveryReport& report);

}  // namespace mooncake::store
