// Hdf5Tier::Recover: rebuilds the tier's index from its files after a restart.
#include <algorithm>
#include <filesystem>
#include <vector>

#include "common/checksum.h"
#include "store/hdf5/bucket_file.h"
#include "store/hdf5/tier.h"

namespace mooncake::store::hdf5 {

namespace fs = std::filesystem;

Status Hdf5Tier::Recover(RecoveryReport* report) {
  std::vector<std::pair<uint32_t, std::string>> files;
  std::error_code ec;
  for (const auto& de : fs::directory_iterator(opts_.dir, ec)) {
    std::string name = de.path().filename().string();
    if (name.size() != 18 || name.rfind("bucket-", 0) != 0 || de.path().extension() != ".h5") {
      continue;
    }
    try {
      files.emplace_back(static_cast<uint32_t>(std::stoul(name.substr(7, 8))), de.path());
    } catch (...) {  // std::stoul on a malformed name: not one of ours
      continue;
    }
  }
  if (ec) return IoError("cannot list " + opts_.dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<std::byte> buf;
  for (const auto& [id, path] : files) {
    next_bucket_ = std::max(next_bucket_, id + 1);
    ++report->files;
    auto file = BucketFile::Open(path);
    if (!file.ok()) {
      ++report->unreadable_files;
      continue;
    }
    auto entries = (*file)->ReadIndex();
    if (!entries.ok()) {
      ++report->unreadable_files;
      continue;
    }
    Bucket bucket;
    bucket.file = std::shared_ptr<BucketFile>(std::move(file).value());
    bucket.last_use = ++use_clock_;
    for (const IndexEntry& e : *entries) {
      bool sane = !e.key.empty() && e.offset <= bucket.file->data_bytes() &&
                  e.length <= bucket.file->data_bytes() - e.offset && !index_.count(e.key);
      if (sane) {
        buf.resize(e.length);
        sane = bucket.file->ReadData(e.offset, buf).ok() &&
               Checksum64(buf.data(), buf.size()) == e.checksum;
      }
      if (!sane) {
        ++report->dropped;
        continue;
      }
      index_[e.key] = Entry{id, e.slot, e.offset, e.length, e.checksum};
      bucket.keys.push_back(e.key);
      report->blocks.push_back(
          SsdBlock{e.key, e.length, e.checksum, (uint64_t{id} << 32) | e.slot});
      ++report->recovered;
    }
    buckets_[id] = std::move(bucket);
  }
  return Status::Ok();
}

}  // namespace mooncake::store::hdf5
