// BucketFile: one self-describing HDF5 file of the SSD tier. Internal to src/store/hdf5.
//
// Layout (format version 2), all fixed at creation so that appending a block never changes HDF5
// metadata and a torn tail cannot damage earlier blocks:
//   /blocks  uint8[data_bytes], contiguous, allocated early, never filled (sparse on disk). A
//            record is the block's `length` bytes at `offset` (64-byte aligned), then its key's
//            `key_length` bytes (a byte string: NUL and non-UTF-8 allowed); a tombstone record
//            is the key alone (length 0).
//   /index   compound[max_entries] {kind: uint32 (0 unused, 1 block, 2 tombstone), key_length:
//            uint32, version, offset, length, checksum, key_checksum: uint64, written_ns: int64
//            (Unix time)}, contiguous, allocated early
// Version 1 (keys as NUL-terminated char[256] in the slot, no versions) is refused by the tier
// (Hdf5Tier::Open names the file); docs/STORE.md says what to do with such a folder.
//   file attributes: format_version, cluster_id, model_preset, kv_layout, block_tokens,
//            store_rank, checksum_algorithm ("XXH3_64")
// Group commit: Stage writes a block's bytes (not yet indexed); Commit then makes every staged
// block indexed in one go: H5Fflush (the bytes reach the OS), one H5Dwrite of their index slots,
// H5Fflush, and with fsync one fdatasync; a new file's first such commit then fsyncs the folder,
// so that the file's name survives a power loss before any block in it is acknowledged (else a
// power loss may leave an acknowledged block in a file no folder entry names). A slot is written
// only after the bytes it names were flushed, so a killed process never leaves a slot naming
// bytes the OS did not get; after a power loss the disk may hold a slot whose bytes did not land
// (the index and the data are synced together): recovery checksums every slot and drops such a
// block, and it was never acknowledged.
//
// Thread: HDF5 is built thread-safe (one global lock); Append and ReadData may run on different
// threads. The owner keeps the file alive while any call is running.
#pragma once

#include <atomic>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/hdf5/commit_stage.h"
#include "store/hdf5/h5_handle.h"
#include "store/hdf5/slot_kind.h"
#include "store/types.h"

namespace mooncake::store::hdf5 {

inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kMaxSlotKeyBytes = store::kMaxKeyBytes;  // the store's one key limit

struct BucketAttributes {
  uint32_t format_version = kFormatVersion;
  std::string cluster_id;
  std::string model_preset;
  std::string kv_layout;  // e.g. "layers=80,kv_heads=8,head_dim=128,dtype=bf16"
  uint32_t block_tokens = 512;
  int32_t store_rank = -1;
};

struct IndexEntry {
  uint32_t slot = 0;
  SlotKind kind = SlotKind::kBlock;
  std::string key;
  uint64_t version = 0;
  bool key_intact = true;  // ReadIndex: the key's bytes were read and match key_checksum
  uint64_t offset = 0;     // bytes into /blocks
  uint64_t length = 0;
  uint64_t checksum = 0;  // XXH3-64 of the block's bytes
  int64_t written_ns = 0;
};

class BucketFile {
 public:
  // `on_sync` (may be empty) runs after each fdatasync and folder fsync of Commit.
  static Result<std::unique_ptr<BucketFile>> Create(const std::string& path,
                                                    const BucketAttributes& attrs,
                                                    uint64_t data_bytes, uint32_t max_entries,
                                                    SyncHook on_sync = {});
  // Read-only; tolerates a file shorter than HDF5 expects (a torn tail reads as zeros, which
  // fails the checksum of the block it tore).
  static Result<std::unique_ptr<BucketFile>> Open(const std::string& path);

  // Room for a record of `length` block bytes and a key of `key_length` bytes.
  bool HasRoom(uint64_t length, uint64_t key_length) const {
    return !read_only_ && !failed_ && next_slot_ < max_entries_ &&
           used_ + length + key_length <= data_bytes_;
  }
  // Writes one record (a block's bytes then its key; a tombstone when `kind` says so, `bytes`
  // empty) after the previous one and reserves its index slot; it is not indexed (nor durable)
  // until Commit. `start_writeback` (for a Commit with fsync) also has the kernel start writing
  // the bytes to the disk (per kWritebackChunk). Returns the entry it will have.
  Result<IndexEntry> Stage(SlotKind kind, const std::string& key, uint64_t version,
                           std::span<const std::byte> bytes, uint64_t checksum,
                           bool start_writeback);
  // Indexes every staged block: flush of the bytes, one write of their slots, flush of the
  // index, and with `fsync` one fdatasync, then on the file's first commit an fsync of its
  // folder (power-loss durable: bytes, slots and the file's name). `on_stage` (may be empty) runs
  // after each step (crash tests). After a failure the file takes no more blocks (a half-written
  // index must not be reused) and the staged blocks are lost.
  Status Commit(bool fsync, const std::function<void(CommitStage)>& on_stage);
  uint32_t staged() const { return next_slot_ - committed_slots_; }
  Status ReadData(uint64_t offset, std::span<std::byte> out) const;
  // Used slots only, in slot order, keys read from /blocks (a key whose bytes are out of range
  // or fail key_checksum has key_intact false). Block bytes are not verified here.
  Result<std::vector<IndexEntry>> ReadIndex() const;
  Result<BucketAttributes> ReadAttributes() const;

  const std::string& path() const { return path_; }
  uint64_t data_bytes() const { return data_bytes_; }
  uint64_t used_bytes() const { return used_; }

 private:
  BucketFile() = default;
  Status Sync(bool fsync, bool flush);  // H5Fflush when `flush`, then fdatasync when `fsync`
  Status WriteStagedSlots();
  // The file descriptor under /blocks once HDF5 allocated it (raw_address_ set), else -1.
  int RawFd() const;
  void StartWriteback();  // of /blocks bytes [writeback_from_, used_)
  // Writeback is started per 8 MiB written. Per block, 256 KiB blocks became small disk writes
  // (slower than none); per 8 MiB, durable 16 MiB spills went from ~185 to ~300 MB/s (4
  // interleaved runs each), 256 KiB and 1 MiB stayed level or gained a little.
  static constexpr uint64_t kWritebackChunk = 8ull << 20;

  std::string path_;
  bool read_only_ = false;
  H5Handle file_, blocks_, index_, entry_type_;
  // Fast read path: /blocks is contiguous, so once HDF5 has allocated it its bytes sit at a fixed
  // file address and a block is one pread() on the file's descriptor. Found lazily (allocation
  // happens at the first write); -1 / 0 until then, and reads go through H5Dread.
  mutable std::atomic<int> raw_fd_{-1};
  mutable std::atomic<uint64_t> raw_address_{0};
  uint64_t data_bytes_ = 0;
  uint32_t max_entries_ = 0;
  uint64_t used_ = 0;
  uint64_t writeback_from_ = 0;   // /blocks bytes before this were handed to StartWriteback
  uint32_t next_slot_ = 0;        // the next slot Stage hands out
  uint32_t committed_slots_ = 0;  // slots [0, committed_slots_) are written and flushed
  std::vector<IndexEntry> staged_;
  bool failed_ = false;         // a Commit failed: the index may be half written
  bool folder_synced_ = false;  // the folder entry naming this file was fsynced
  SyncHook on_sync_;
};

// fsync of the folder `dir` (its entries: names of files created or removed in it), then
// `on_sync` (may be empty) with kDirectory.
Status SyncDirectory(const std::string& dir, const SyncHook& on_sync);

}  // namespace mooncake::store::hdf5
