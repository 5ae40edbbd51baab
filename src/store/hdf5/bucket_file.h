// BucketFile: one self-describing HDF5 file of the SSD tier. Internal to src/store/hdf5.
//
// Layout (format version 1), all fixed at creation so that appending a block never changes HDF5
// metadata and a torn tail cannot damage earlier blocks:
//   /blocks  uint8[data_bytes], contiguous, allocated early, never filled (sparse on disk)
//   /index   compound[max_entries] {key: char[256], offset, length, checksum: uint64,
//            written_ns: int64 (Unix time)}, contiguous, allocated early; a slot is used when
//            its length is non-zero
//   file attributes: format_version, cluster_id, model_preset, kv_layout, block_tokens,
//            store_rank, checksum_algorithm ("XXH3_64")
// Append writes the bytes, flushes, then writes the index slot and flushes again: a block is in
// the index only after its bytes reached the OS (and the disk, with fsync on).
//
// Thread: HDF5 is built thread-safe (one global lock); Append and ReadData may run on different
// threads. The owner keeps the file alive while any call is running.
#pragma once

#include <atomic>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/hdf5/h5_handle.h"

namespace mooncake::store::hdf5 {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kMaxKeyBytes = 255;  // the key field holds 256 bytes, NUL-terminated

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
  std::string key;
  uint64_t offset = 0;  // bytes into /blocks
  uint64_t length = 0;
  uint64_t checksum = 0;  // XXH3-64 of the block's bytes
  int64_t written_ns = 0;
};

class BucketFile {
 public:
  static Result<std::unique_ptr<BucketFile>> Create(const std::string& path,
                                                    const BucketAttributes& attrs,
                                                    uint64_t data_bytes, uint32_t max_entries);
  // Read-only; tolerates a file shorter than HDF5 expects (a torn tail reads as zeros, which
  // fails the checksum of the block it tore).
  static Result<std::unique_ptr<BucketFile>> Open(const std::string& path);

  bool HasRoom(uint64_t length) const {
    return !read_only_ && next_slot_ < max_entries_ && used_ + length <= data_bytes_;
  }
  // Appends one block; `fsync` also forces both writes to the disk. Returns its index entry.
  Result<IndexEntry> Append(const std::string& key, std::span<const std::byte> bytes,
                            uint64_t checksum, bool fsync);
  Status ReadData(uint64_t offset, std::span<std::byte> out) const;
  // Used slots only, in slot order. Entries are not verified here.
  Result<std::vector<IndexEntry>> ReadIndex() const;
  Result<BucketAttributes> ReadAttributes() const;

  const std::string& path() const { return path_; }
  uint64_t data_bytes() const { return data_bytes_; }
  uint64_t used_bytes() const { return used_; }

 private:
  BucketFile() = default;
  Status Sync(bool fsync);

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
  uint32_t next_slot_ = 0;
};

}  // namespace mooncake::store::hdf5
