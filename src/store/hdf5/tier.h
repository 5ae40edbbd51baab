// Hdf5Tier: a store rank's SSD tier. Blocks evicted from DRAM are appended to self-describing
// HDF5 bucket files under `dir` (layout in bucket_file.h and docs/STORE.md), read back with their
// checksum verified, and recovered from the files after a restart.
//
// - Spill copies the bytes into a bounded queue (at most `queue_bytes`) and returns; one writer
//   thread appends them. Spill blocks while the queue is full (back-pressure); TrySpill returns
//   Busy instead. `done` runs on the writer thread once the block is durable and indexed, or
//   with the error.
// - Group commit: the writer takes every queued block (up to `commit_bytes`), writes their
//   bytes, then H5Fflush, one write of their index slots, H5Fflush, and with `fsync` one
//   fdatasync, and in a new bucket file's first group an fsync of `dir` (bucket_file.h). Only then
//   are the blocks visible (Read, Lookup) and their `done` called, in queue order. A crash before
//   that leaves bytes no index slot names, or (power loss only) a slot whose bytes fail the
//   checksum; neither is ever served. Under light load a group is one block; a burst of spills
//   shares one flush pair and one fdatasync.
// - Capacity: at most capacity / bucket_bytes bucket files. With `evict_lru` (a KV cache),
//   eviction is LRU at bucket granularity (append-only files cannot free single blocks): the
//   least recently read or written bucket is deleted and `on_drop` is called for each of its keys
//   (on the writer thread). Without it (a store: nothing acknowledged may vanish) a full tier
//   answers spills NoSpace and deletes nothing.
// - Versions (store/ssd_tier.h): the index holds one (key, version) per key, the highest; a
//   tombstone slot (key, version) hides that version and older at once and is durable before
//   Tombstone() returns. When the LRU deletes a bucket, its tombstones that still matter are
//   written again into the next bucket, so a removed version cannot come back from an older file.
// - Recovery (Open): every bucket-*.h5 under `dir` is opened read-only, each index slot's key and
//   bytes are checksummed; per key the highest version above its highest tombstone is kept, and
//   every other slot is dropped and counted by reason, file by file; recovered buckets are sealed
//   (new blocks go to new files). A file of another on-disk format version fails Open, named.
//
// Thread: every public method may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "store/hdf5/commit_stage.h"
#include "store/hdf5/slot_kind.h"
#include "store/ssd_tier.h"

namespace mooncake::store::hdf5 {

class BucketFile;
using store::RecoveryReport;  // what Open found (store/ssd_tier.h)
using store::SsdBlock;        // the tier's block record (store/ssd_tier.h)

struct Hdf5TierOptions {
  std::string dir;                       // created if missing
  uint64_t capacity = 8ull << 30;        // bytes of bucket files
  uint64_t bucket_bytes = 256ull << 20;  // /blocks size per file; a block must fit one bucket
  uint32_t bucket_entries = 4096;        // index slots per file
  uint64_t queue_bytes = 64ull << 20;    // spill queue bound
  bool evict_lru = true;                 // false: a full tier refuses spills (NoSpace)
  bool fsync = false;                    // one fdatasync per group (power-loss durability)
  uint64_t commit_bytes = 32ull << 20;   // a group stops after the block that reaches this
  // File attributes.
  std::string cluster_id;
  std::string model_preset;
  std::string kv_layout;
  uint32_t block_tokens = 512;
  int32_t store_rank = -1;
  // Called (writer thread) for each key removed by the tier's LRU. May be empty.
  std::function<void(const std::string& key)> on_drop;
  // Same, with the block's size, checksum and location (what the master's DropReplica needs).
  std::function<void(const SsdBlock& block)> on_drop_block;
  // Test hook: runs on the writer thread after each step of a group commit (a crash test raises
  // SIGKILL there). May be empty.
  std::function<void(CommitStage stage)> on_commit_stage;
  // Test seam: runs (writer thread, or Open) after each fdatasync of a bucket file and fsync of
  // a folder, in order; a non-OK status fails that sync (fault injection). May be empty.
  SyncHook on_sync;
};

struct TierStats {
  uint64_t blocks = 0;
  uint64_t buckets = 0;
  uint64_t bytes_on_disk = 0;  // sum of bucket capacities
  uint64_t queued_bytes = 0;
  uint64_t spilled = 0;
  uint64_t dropped_by_lru = 0;
  uint64_t commits = 0;  // group commits (spilled / commits = blocks per flush pair and sync)
};

class Hdf5Tier final : public SsdTier {
 public:
  using SpillDone = SsdTier::SpillDone;

  static Result<std::unique_ptr<Hdf5Tier>> Open(Hdf5TierOptions opts, RecoveryReport* report);
  ~Hdf5Tier();  // writes what is queued, then stops the writer
  Hdf5Tier(const Hdf5Tier&) = delete;
  Hdf5Tier& operator=(const Hdf5Tier&) = delete;

  Status Spill(const std::string& key, uint64_t version, std::span<const std::byte> bytes,
               uint64_t checksum, SpillDone done);
  Status TrySpill(const std::string& key, uint64_t version, std::span<const std::byte> bytes,
                  uint64_t checksum, SpillDone done);
  // Zero-copy spill: `bytes` must stay valid and unchanged until `done` runs (a store rank
  // spills straight from its DRAM segment: the master keeps the region reserved until
  // CompleteSpill, which the store rank calls from `done`). Counts against the queue bound and
  // blocks like Spill.
  Status SpillBorrowed(const std::string& key, uint64_t version, std::span<const std::byte> bytes,
                       uint64_t checksum, SpillDone done);
  // SpillBorrowed without waiting: Busy (and `done` is not called) when the queue is full.
  Status TrySpillBorrowed(const std::string& key, uint64_t version,
                          std::span<const std::byte> bytes, uint64_t checksum,
                          SpillDone done) override;
  // Reads the block into `out` (at least its size) and verifies its checksum. Returns the size.
  Result<uint64_t> Read(const std::string& key, uint64_t version,
                        std::span<std::byte> out) override;
  Result<uint64_t> ReadUnverified(const std::string& key, uint64_t version,
                                  std::span<std::byte> out) override;
  Result<SsdBlock> Lookup(const std::string& key, uint64_t version) const override;
  // The block held for `key`, whatever its version (tools and benchmarks that know keys only).
  Result<SsdBlock> LookupLatest(const std::string& key) const;
  // Through the writer queue (after the spills queued before it), never refused for a full
  // queue; waits until the tombstone slot is flushed (and fdatasync'ed with `fsync`).
  Status Tombstone(const std::string& key, uint64_t version) override;
  void Drain();  // returns when the queue is empty and the writer idle
  TierStats Stats() const;

 private:
  struct Job {
    SlotKind kind = SlotKind::kBlock;
    std::string key;
    uint64_t version = 0;
    std::vector<std::byte> bytes;     // owned copy (empty when borrowed)
    std::span<const std::byte> view;  // what to write: `bytes` or the caller's memory
    uint64_t checksum;
    SpillDone done;
  };
  struct Entry {
    uint32_t bucket;
    uint32_t slot;
    uint64_t offset;
    uint64_t length;
    uint64_t checksum;
    uint64_t version;
  };
  struct Bucket {
    std::shared_ptr<BucketFile> file;
    std::vector<std::string> keys;
    std::vector<std::pair<std::string, uint64_t>> tombstones;  // (key, version) slots in it
    uint64_t last_use = 0;
  };

  explicit Hdf5Tier(Hdf5TierOptions opts);
  Status Enqueue(const std::string& key, uint64_t version, std::span<const std::byte> bytes,
                 uint64_t checksum, SpillDone done, bool wait, bool copy);
  // A block of the group being written: its job, and where Stage put it.
  struct Staged {
    size_t job;
    uint32_t bucket;
    uint32_t slot;
    uint64_t offset;
    uint64_t length;
  };
  void WriterLoop();
  // Writes a group of jobs (one commit per bucket touched); one result per job, in order.
  std::vector<Result<SsdBlock>> WriteGroup(std::vector<Job>& jobs);
  // Commits the active bucket's staged blocks and makes them visible; fills their results.
  void CommitStaged(std::vector<Job>& jobs, std::vector<Staged>& staged,
                    std::vector<Result<SsdBlock>>& out);
  Status RollBucket();  // writer thread: seal the active bucket, make room, create the next
  Status Recover(RecoveryReport* report);
  Result<uint64_t> ReadBlock(const std::string& key, uint64_t version, std::span<std::byte> out,
                             bool verify);
  // Holds mu_: why (key, version) must not be written or indexed ("" when it may).
  std::string Refusal(const std::string& key, uint64_t version) const;

  Hdf5TierOptions opts_;
  mutable std::mutex mu_;
  std::condition_variable queue_cv_;  // writer waits for jobs
  std::condition_variable space_cv_;  // producers wait for room; Drain waits for idle
  std::deque<Job> queue_;
  // Buffers of written jobs, reused so a spill copies into warm memory instead of faulting in
  // fresh pages (a 1 MiB vector is a new mmap each time). Bounded by queue_bytes in total.
  std::vector<std::vector<std::byte>> spare_;
  uint64_t spare_bytes_ = 0;
  uint64_t queued_bytes_ = 0;
  bool writing_ = false;
  bool stop_ = false;
  std::unordered_map<std::string, Entry> index_;
  std::unordered_map<std::string, uint64_t> tombstones_;  // key -> its highest tombstone
  std::map<uint32_t, Bucket> buckets_;
  std::shared_ptr<BucketFile> active_;  // writer thread only
  uint32_t active_id_ = 0;
  uint32_t next_bucket_ = 0;
  uint64_t use_clock_ = 0;
  TierStats stats_;
  std::thread writer_;
};

}  // namespace mooncake::store::hdf5
