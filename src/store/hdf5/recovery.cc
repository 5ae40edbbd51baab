// Hdf5Tier::Recover: rebuilds the tier's index from its files after a restart.
//
// Per key, the block kept is the highest version above the key's highest tombstone (a tombstone
// in any file covers blocks in every file). Every other slot is dropped and counted by reason,
// and each file that lost anything gets one line in RecoveryReport::file_notes.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

#include "common/checksum.h"
#include "store/hdf5/bucket_file.h"
#include "store/hdf5/tier.h"

namespace mooncake::store::hdf5 {

namespace fs = std::filesystem;

namespace {

struct FileDrops {
  uint64_t torn = 0, superseded = 0, tombstoned = 0;
};

struct Candidate {
  uint32_t bucket;
  IndexEntry entry;
};

std::string Note(const std::string& path, const FileDrops& d) {
  std::string m = path + ": dropped";
  auto add = [&](uint64_t n, const char* why) {
    if (n > 0) m += " " + std::to_string(n) + " " + why + ",";
  };
  add(d.torn, "torn (key or bytes fail their checksum)");
  add(d.superseded, "superseded (a higher version of the key is on disk)");
  add(d.tombstoned, "tombstoned (removed before the restart)");
  m.pop_back();
  return m;
}

// The bucket files of `dir` (bucket-NNNNNNNN.h5) by id, in id order.
Result<std::vector<std::pair<uint32_t, std::string>>> ListBucketFiles(const std::string& dir) {
  std::vector<std::pair<uint32_t, std::string>> files;
  std::error_code ec;
  for (const auto& de : fs::directory_iterator(dir, ec)) {
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
  if (ec) return IoError("cannot list " + dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

// Of one key's slots, the highest version above `removed` (its highest tombstone); ties keep the
// first file's slot; null when none is. Every other slot is counted in `drops` by reason.
const Candidate* ChooseSlot(const std::vector<Candidate>& list, uint64_t removed,
                            std::map<uint32_t, FileDrops>* drops) {
  const Candidate* best = nullptr;
  for (const Candidate& c : list) {
    if (c.entry.version > removed && (best == nullptr || c.entry.version > best->entry.version)) {
      best = &c;
    }
  }
  for (const Candidate& c : list) {
    if (&c == best) continue;
    ++(c.entry.version <= removed ? (*drops)[c.bucket].tombstoned : (*drops)[c.bucket].superseded);
  }
  return best;
}

// The blocks in file and slot order, the drops' totals and a note per file that lost anything.
void Tally(const std::map<uint32_t, FileDrops>& drops,
           const std::function<std::string(uint32_t)>& path_of, RecoveryReport* report) {
  // In file and slot order, as the files hold them (the map of candidates has none).
  std::sort(report->blocks.begin(), report->blocks.end(),
            [](const SsdBlock& a, const SsdBlock& b) { return a.location < b.location; });
  for (const auto& [id, d] : drops) {
    report->dropped_torn += d.torn;
    report->dropped_superseded += d.superseded;
    report->dropped_tombstoned += d.tombstoned;
    if (d.torn + d.superseded + d.tombstoned > 0)
      report->file_notes.push_back(Note(path_of(id), d));
  }
  report->dropped = report->dropped_torn + report->dropped_superseded + report->dropped_tombstoned;
}

}  // namespace

Status Hdf5Tier::Recover(RecoveryReport* report) {
  auto listed = ListBucketFiles(opts_.dir);
  if (!listed.ok()) return listed.status();
  const auto& files = *listed;
  std::vector<std::byte> buf;
  std::map<uint32_t, FileDrops> drops;
  std::unordered_map<std::string, std::vector<Candidate>> candidates;
  for (const auto& [id, path] : files) {
    next_bucket_ = std::max(next_bucket_, id + 1);
    ++report->files;
    auto file = BucketFile::Open(path);
    auto attrs = file.ok() ? (*file)->ReadAttributes() : Result<BucketAttributes>(file.status());
    if (attrs.ok() && attrs->format_version != kFormatVersion) {
      return NotSupported(path + " has on-disk format version " +
                          std::to_string(attrs->format_version) + "; this build reads version " +
                          std::to_string(kFormatVersion) +
                          " only (keys and versions are stored differently; docs/STORE.md "
                          "\"On-disk format versions\"): move the folder away or delete it");
    }
    auto entries =
        attrs.ok() ? (*file)->ReadIndex() : Result<std::vector<IndexEntry>>(attrs.status());
    if (!entries.ok()) {
      ++report->unreadable_files;
      report->file_notes.push_back(path + ": dropped the whole file (damaged HDF5 metadata: " +
                                   entries.status().ToString() + "); it is left in place");
      continue;
    }
    Bucket bucket;
    bucket.file = std::shared_ptr<BucketFile>(std::move(file).value());
    bucket.last_use = ++use_clock_;
    for (IndexEntry& e : *entries) {
      if (e.key_intact) report->max_version = std::max(report->max_version, e.version);
      if (e.key_intact && e.kind == SlotKind::kTombstone) {
        ++report->tombstones;
        uint64_t& t = tombstones_[e.key];
        t = std::max(t, e.version);
        bucket.tombstones.emplace_back(e.key, e.version);
        continue;
      }
      bool sane = e.key_intact && e.offset <= bucket.file->data_bytes() &&
                  e.length <= bucket.file->data_bytes() - e.offset;
      if (sane) {
        buf.resize(e.length);
        sane = bucket.file->ReadData(e.offset, buf).ok() &&
               Checksum64(buf.data(), buf.size()) == e.checksum;
      }
      if (!sane) {
        ++drops[id].torn;
        continue;
      }
      candidates[e.key].push_back(Candidate{id, std::move(e)});
    }
    buckets_[id] = std::move(bucket);
  }
  // Per key: the highest version above its tombstone wins; ties keep the first file's slot.
  for (auto& [key, list] : candidates) {
    auto t = tombstones_.find(key);
    const uint64_t removed = t == tombstones_.end() ? 0 : t->second;
    const Candidate* best = ChooseSlot(list, removed, &drops);
    if (best == nullptr) continue;
    const IndexEntry& e = best->entry;
    index_[key] = Entry{best->bucket, e.slot, e.offset, e.length, e.checksum, e.version};
    buckets_[best->bucket].keys.push_back(key);
    report->blocks.push_back(
        SsdBlock{key, e.version, e.length, e.checksum, (uint64_t{best->bucket} << 32) | e.slot});
    ++report->recovered;
  }
  Tally(
      drops, [this](uint32_t id) { return buckets_.at(id).file->path(); }, report);
  return Status::Ok();
}

}  // namespace mooncake::store::hdf5
