// SsdStoreService: what a store rank does for the SSD tier of the live store. It serves
//   kSpill   (from the master): write blocks of its own DRAM segment to its SsdTier, zero-copy
//            (the master keeps those regions reserved until it hears back); the answer is sent
//            from the tier's writer thread once every block of the request is durable, or at
//            once for blocks refused because the tier's bounded queue is full (Busy: the master
//            then drops them from DRAM, as without a tier).
//   kPromote (from the master): copy blocks from the tier into reserved regions of the segment.
//   kSsdStage (from a client): read the blocks into a registered staging region, several reads
//            in flight, and answer where they are; the client READs them one-sided and sends
//            kSsdRelease (SsdStager, ssd_stager.h). Needs SsdStoreServiceConfig::transport.
//   kSsdRead (from a client; the path before kSsdStage, and the fallback when the staging
//            region could not be set up): answer the blocks' bytes over the RPC (checksum
//            verified by the tier), one request at a time. Capped at kMaxSsdReadBytes.
//   kSsdTombstone (from the master, on a remove): persist tombstones in the tier, answered once
//            they are durable (the remove is acknowledged after that).
// and tells the master (one-way kSsdDrop) when the tier's own LRU deletes blocks.
//
// Threading: handlers run on the Rpc dispatcher (kSsdStage and kSsdRelease inline: they only
// queue); spill answers on the tier's writer thread, staged reads on the stager's readers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "common/ids.h"
#include "store/net/ssd_messages.h"
#include "store/ssd/ssd_stager.h"
#include "store/ssd_tier.h"
#include "transport/rpc.h"

namespace mooncake::store {

struct SsdStoreStats {
  uint64_t spilled = 0;         // blocks written on the master's request
  uint64_t spills_refused = 0;  // queue full (Busy)
  uint64_t spill_errors = 0;    // write failed
  uint64_t promoted = 0;        // blocks copied back into DRAM
  uint64_t reads_served = 0;    // blocks answered to kSsdRead or kSsdStage
  uint64_t read_failures = 0;   // of those, NotFound, Corrupt or Busy (never served)
  uint64_t dropped_by_lru = 0;  // reported to the master
  uint64_t tombstones = 0;      // written on the master's request (removes)
  SsdStagerStats staged;        // kSsdStage (zero without a staging region)
};

struct SsdStoreServiceConfig {
  // Where the staging region of kSsdStage is registered; null: kSsdStage answers NotSupported
  // and clients read through kSsdRead.
  transport::Transport* transport = nullptr;
  SsdStagerConfig staging;
};

class SsdStoreService {
 public:
  // `rpc`, `tier`, the segment memory and cfg.transport must outlive the service; `master` is
  // the conductor.
  SsdStoreService(transport::Rpc& rpc, SsdTier& tier, std::span<std::byte> segment, Rank master,
                  SsdStoreServiceConfig cfg = {});
  ~SsdStoreService();

  // Sets up the staging region (a failure is logged: kSsdRead still serves) and registers the
  // handlers (before peers may call).
  void Start();
  // Stops the staged reads and unregisters their region: call before the transport closes.
  void Stop();
  // Forward a block the tier's LRU deleted to the master (wire as the tier's on-drop callback, e.g.
  // Hdf5TierOptions::on_drop_block; runs on the writer thread).
  void OnTierDrop(const SsdBlock& block);
  SsdStoreStats Stats() const;

  // Test hook: runs on the writer thread after each block the tier made durable on a kSpill
  // (before the answer is sent). May not return (a crash test raises SIGKILL here).
  std::function<void(const std::string& key)> on_spilled;

 private:
  void Spill(std::span<const std::byte> request, transport::Responder responder);
  StatusResponse Promote(const PromoteRequest& request);
  SsdReadResponse Read(const SsdStageRequest& request);
  StatusResponse Tombstone(const SsdTombstoneRequest& request);
  void Stage(std::span<const std::byte> request, transport::Responder responder);
  Status CheckRange(uint64_t offset, uint64_t length) const;

  transport::Rpc& rpc_;
  SsdTier& tier_;
  std::span<std::byte> segment_;
  Rank master_;
  SsdStoreServiceConfig cfg_;
  std::unique_ptr<SsdStager> stager_;  // set by Start, when cfg_.transport is
  std::atomic<uint64_t> spilled_{0}, refused_{0}, spill_errors_{0}, promoted_{0}, reads_{0},
      read_failures_{0}, dropped_{0}, tombstones_{0};
};

// The store rank's RecoveryReport in wire form, for the conductor.
RecoveredBlocks ToRecoveredBlocks(const RecoveryReport& report);

}  // namespace mooncake::store
