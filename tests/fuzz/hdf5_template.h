// The bucket file the HDF5 recovery target mutates: written by the tier itself (three blocks),
// with where its raw /index and /blocks data lie. The target replaces those bytes with its input,
// so the HDF5 metadata stays intact and the mutations reach what OUR recovery decodes (index
// slots: keys, offsets, lengths, checksums; block bytes). Shared with make_fuzz_seeds, whose seed
// is exactly those two regions of a real file.
#pragma once

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/checksum.h"
#include "common/status.h"
#include "store/hdf5/tier.h"

namespace mooncake::fuzz {

struct BucketTemplate {
  std::vector<std::byte> file;
  uint64_t index_at = 0, index_bytes = 0;
  uint64_t blocks_at = 0, blocks_bytes = 0;
};

inline constexpr const char* kTemplateName = "bucket-00000000.h5";

// Where dataset `name` of the file lies (contiguous, allocated early by BucketFile).
inline bool DatasetRegion(hid_t file, const char* name, uint64_t* at, uint64_t* bytes) {
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  if (d < 0) return false;
  haddr_t offset = H5Dget_offset(d);
  *bytes = H5Dget_storage_size(d);
  H5Dclose(d);
  *at = offset;
  return offset != HADDR_UNDEF && *bytes > 0;
}

inline Result<BucketTemplate> MakeBucketTemplate(const std::string& dir) {
  {
    store::hdf5::Hdf5TierOptions opts;
    opts.dir = dir;
    opts.capacity = 64ull << 10;
    opts.bucket_bytes = 4096;
    opts.bucket_entries = 4;
    opts.queue_bytes = 64ull << 10;
    opts.cluster_id = "fuzz";
    auto tier = store::hdf5::Hdf5Tier::Open(opts, nullptr);
    if (!tier.ok()) return tier.status();
    for (int i = 0; i < 3; ++i) {
      std::vector<std::byte> block(100 * (i + 1), std::byte(0x30 + i));
      MC_RETURN_IF_ERROR((*tier)->Spill("req42/block" + std::to_string(i), 1, block,
                                        Checksum64(block.data(), block.size()), nullptr));
    }
    (*tier)->Drain();
  }
  const std::string path = dir + "/" + kTemplateName;
  BucketTemplate t;
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return IoError("cannot open " + path);
  bool ok = DatasetRegion(f, "index", &t.index_at, &t.index_bytes) &&
            DatasetRegion(f, "blocks", &t.blocks_at, &t.blocks_bytes);
  H5Fclose(f);
  if (!ok) return IoError(path + ": no contiguous /index and /blocks");
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  t.file.resize(std::max<uint64_t>(bytes.size(), t.blocks_at + t.blocks_bytes));
  std::memcpy(t.file.data(), bytes.data(), bytes.size());
  std::filesystem::remove(path);
  return t;
}

}  // namespace mooncake::fuzz
