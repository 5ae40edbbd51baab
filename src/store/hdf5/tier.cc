#include "store/hdf5/tier.h"

#include <cstdio>
#include <filesystem>
#include <future>

#include "common/checksum.h"
#include "store/hdf5/bucket_file.h"

namespace mooncake::store::hdf5 {

namespace fs = std::filesystem;

namespace {
uint64_t Pack(uint32_t bucket, uint32_t slot) { return (uint64_t{bucket} << 32) | slot; }
std::string BucketPath(const std::string& dir, uint32_t id) {
  char name[32];
  std::snprintf(name, sizeof(name), "bucket-%08u.h5", id);
  return (fs::path(dir) / name).string();
}
}  // namespace

Hdf5Tier::Hdf5Tier(Hdf5TierOptions opts) : opts_(std::move(opts)) {}

Result<std::unique_ptr<Hdf5Tier>> Hdf5Tier::Open(Hdf5TierOptions opts, RecoveryReport* report) {
  if (opts.dir.empty()) return InvalidArgument("store.ssd_dir is empty");
  if (opts.bucket_bytes == 0 || opts.bucket_entries == 0 || opts.capacity < opts.bucket_bytes) {
    return InvalidArgument("store.ssd_capacity must hold at least one bucket of " +
                           std::to_string(opts.bucket_bytes) + " B");
  }
  std::error_code ec;
  const bool created = fs::create_directories(opts.dir, ec);
  if (ec) return IoError("cannot create " + opts.dir + ": " + ec.message());
  if (created && opts.fsync) {  // the new folder's name, before any block in it is acknowledged
    fs::path folder = fs::absolute(opts.dir, ec).lexically_normal();
    if (!folder.has_filename()) folder = folder.parent_path();  // "a/b/" names b
    MC_RETURN_IF_ERROR(SyncDirectory(folder.parent_path().string(), opts.on_sync));
  }
  std::unique_ptr<Hdf5Tier> tier(new Hdf5Tier(std::move(opts)));
  RecoveryReport local;
  MC_RETURN_IF_ERROR(tier->Recover(report != nullptr ? report : &local));
  tier->writer_ = std::thread([t = tier.get()] { t->WriterLoop(); });
  return tier;
}

Hdf5Tier::~Hdf5Tier() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  queue_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

Status Hdf5Tier::Spill(const std::string& key, uint64_t version, std::span<const std::byte> bytes,
                       uint64_t checksum, SpillDone done) {
  return Enqueue(key, version, bytes, checksum, std::move(done), /*wait=*/true, /*copy=*/true);
}

Status Hdf5Tier::SpillBorrowed(const std::string& key, uint64_t version,
                               std::span<const std::byte> bytes, uint64_t checksum,
                               SpillDone done) {
  return Enqueue(key, version, bytes, checksum, std::move(done), /*wait=*/true, /*copy=*/false);
}

Status Hdf5Tier::TrySpillBorrowed(const std::string& key, uint64_t version,
                                  std::span<const std::byte> bytes, uint64_t checksum,
                                  SpillDone done) {
  return Enqueue(key, version, bytes, checksum, std::move(done), /*wait=*/false, /*copy=*/false);
}

Status Hdf5Tier::TrySpill(const std::string& key, uint64_t version,
                          std::span<const std::byte> bytes, uint64_t checksum, SpillDone done) {
  return Enqueue(key, version, bytes, checksum, std::move(done), /*wait=*/false, /*copy=*/true);
}

Status Hdf5Tier::Enqueue(const std::string& key, uint64_t version, std::span<const std::byte> bytes,
                         uint64_t checksum, SpillDone done, bool wait, bool copy) {
  if (std::string why = KeyProblem(key); !why.empty()) {
    return InvalidArgument("SSD tier: " + why);
  }
  if (bytes.empty() || bytes.size() + key.size() > opts_.bucket_bytes) {
    return InvalidArgument("block of " + std::to_string(bytes.size()) +
                           " B does not fit a bucket of " + std::to_string(opts_.bucket_bytes));
  }
  std::unique_lock<std::mutex> lock(mu_);
  // A block larger than the whole queue bound still goes through, alone.
  auto full = [&] { return queued_bytes_ > 0 && queued_bytes_ + bytes.size() > opts_.queue_bytes; };
  if (full()) {
    if (!wait) return {ErrorCode::kBusy, "SSD spill queue is full"};
    space_cv_.wait(lock, [&] { return !full() || stop_; });
  }
  if (stop_) return {ErrorCode::kBusy, "SSD tier is stopping"};
  std::vector<std::byte> buf;
  for (size_t i = spare_.size(); copy && i-- > 0;) {
    if (spare_[i].capacity() >= bytes.size()) {
      buf = std::move(spare_[i]);
      spare_bytes_ -= buf.capacity();
      spare_.erase(spare_.begin() + i);
      break;
    }
  }
  if (copy) buf.assign(bytes.begin(), bytes.end());  // reuses capacity: no faults, no zeroing
  // Moving a vector keeps its heap block, so `view` stays valid as the Job moves.
  std::span<const std::byte> view = copy ? std::span<const std::byte>(buf) : bytes;
  queue_.push_back(
      Job{SlotKind::kBlock, key, version, std::move(buf), view, checksum, std::move(done)});
  queued_bytes_ += bytes.size();
  queue_cv_.notify_one();
  return Status::Ok();
}

Status Hdf5Tier::Tombstone(const std::string& key, uint64_t version) {
  if (std::string why = KeyProblem(key); !why.empty()) {
    return InvalidArgument("SSD tier: " + why);
  }
  auto result = std::make_shared<std::promise<Status>>();
  std::future<Status> written = result->get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return {ErrorCode::kBusy, "SSD tier is stopping"};
    // Hidden at once: no read serves the removed version while its tombstone is written.
    uint64_t& t = tombstones_[key];
    t = std::max(t, version);
    auto it = index_.find(key);
    if (it != index_.end() && it->second.version <= version) index_.erase(it);
    queue_.push_back(
        Job{SlotKind::kTombstone, key, version, {}, {}, 0, [result](Result<SsdBlock> r) {
              result->set_value(r.status());
            }});
    queue_cv_.notify_one();
  }
  return written.get();  // the writer always runs `done` (it drains the queue before stopping)
}

std::string Hdf5Tier::Refusal(const std::string& key, uint64_t version) const {
  auto t = tombstones_.find(key);
  if (t != tombstones_.end() && version <= t->second) {
    return "'" + key + "' version " + std::to_string(version) + " was removed (tombstone " +
           std::to_string(t->second) + ")";
  }
  auto it = index_.find(key);
  if (it != index_.end() && it->second.version > version) {
    return "'" + key + "' version " + std::to_string(version) + " is superseded by " +
           std::to_string(it->second.version) + " on SSD";
  }
  return "";
}

void Hdf5Tier::WriterLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    queue_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stop_ and nothing left to write
    // The group: every queued job, stopping after the one that reaches commit_bytes.
    std::vector<Job> group;
    uint64_t group_bytes = 0;
    while (!queue_.empty() && (group.empty() || group_bytes < opts_.commit_bytes)) {
      group_bytes += queue_.front().view.size();
      group.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    writing_ = true;
    lock.unlock();
    std::vector<Result<SsdBlock>> results = WriteGroup(group);
    for (size_t i = 0; i < group.size(); ++i) {
      if (group[i].done) group[i].done(std::move(results[i]));
    }
    lock.lock();
    for (Job& job : group) {
      queued_bytes_ -= job.view.size();
      if (job.bytes.capacity() > 0 && spare_bytes_ + job.bytes.capacity() <= opts_.queue_bytes) {
        spare_bytes_ += job.bytes.capacity();
        spare_.push_back(std::move(job.bytes));
      }
    }
    writing_ = false;
    space_cv_.notify_all();
  }
}

std::vector<Result<SsdBlock>> Hdf5Tier::WriteGroup(std::vector<Job>& jobs) {
  std::vector<Result<SsdBlock>> out(jobs.size(), Internal("not written"));
  std::vector<Staged> staged;
  // (key, version) -> its first job in this group: a block queued twice is written once.
  std::map<std::pair<std::string, uint64_t>, size_t> in_group;
  std::vector<std::pair<size_t, size_t>> repeats;  // (job, first job of the same block)
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    if (job.kind == SlotKind::kBlock) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = index_.find(job.key);
      if (it != index_.end() && it->second.version == job.version) {
        // This very version is on SSD already (blocks are immutable): nothing to write.
        const Entry& e = it->second;
        out[i] = SsdBlock{job.key, e.version, e.length, e.checksum, Pack(e.bucket, e.slot)};
        continue;
      }
      if (std::string why = Refusal(job.key, job.version); !why.empty()) {
        out[i] = Status(ErrorCode::kAlreadyExists, why);
        continue;
      }
      if (auto [first, fresh] = in_group.emplace(std::pair(job.key, job.version), i); !fresh) {
        repeats.emplace_back(i, first->second);
        continue;
      }
    }
    if (!active_ || !active_->HasRoom(job.view.size(), job.key.size())) {
      CommitStaged(jobs, staged, out);  // a group never spans two files
      if (Status s = RollBucket(); !s.ok()) {
        out[i] = s;
        continue;
      }
    }
    auto e = active_->Stage(job.kind, job.key, job.version, job.view, job.checksum,
                            /*start_writeback=*/opts_.fsync);
    if (!e.ok()) {
      out[i] = e.status();
      continue;
    }
    staged.push_back(Staged{i, active_id_, e->slot, e->offset, e->length});
  }
  CommitStaged(jobs, staged, out);
  for (auto [i, first] : repeats) out[i] = out[first];
  return out;
}

void Hdf5Tier::CommitStaged(std::vector<Job>& jobs, std::vector<Staged>& staged,
                            std::vector<Result<SsdBlock>>& out) {
  if (staged.empty()) return;
  Status s = active_->Commit(opts_.fsync, opts_.on_commit_stage);
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.commits;
  for (const Staged& st : staged) {
    const Job& job = jobs[st.job];
    if (!s.ok()) {
      out[st.job] = s;
      continue;
    }
    Bucket& b = buckets_[st.bucket];
    b.last_use = ++use_clock_;
    const SsdBlock block{job.key, job.version, st.length, job.checksum, Pack(st.bucket, st.slot)};
    if (job.kind == SlotKind::kTombstone) {
      b.tombstones.emplace_back(job.key, job.version);
      out[st.job] = block;
      continue;
    }
    // A tombstone or a newer version may have arrived while the bytes were written: the block
    // stays in the file unindexed (recovery drops it for the same reason).
    if (std::string why = Refusal(job.key, job.version); !why.empty()) {
      out[st.job] = Status(ErrorCode::kAlreadyExists, why);
      continue;
    }
    index_[job.key] = Entry{st.bucket, st.slot, st.offset, st.length, job.checksum, job.version};
    b.keys.push_back(job.key);
    ++stats_.spilled;
    out[st.job] = block;
  }
  staged.clear();
}

Status Hdf5Tier::RollBucket() {
  std::vector<std::string> dropped;
  std::vector<SsdBlock> dropped_blocks;
  std::vector<std::string> removed_files;
  std::vector<std::pair<std::string, uint64_t>> carried;  // tombstones still the key's highest
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool full =
        !buckets_.empty() && (buckets_.size() + 1) * opts_.bucket_bytes > opts_.capacity;
    if (full && !opts_.evict_lru) {
      return NoSpace("the SSD tier in " + opts_.dir +
                     " is full: " + std::to_string(buckets_.size()) + " bucket files of " +
                     std::to_string(opts_.bucket_bytes) + " B (store.ssd_capacity " +
                     std::to_string(opts_.capacity) + " B)");
    }
    while (!buckets_.empty() && (buckets_.size() + 1) * opts_.bucket_bytes > opts_.capacity) {
      auto lru = buckets_.begin();
      for (auto it = buckets_.begin(); it != buckets_.end(); ++it) {
        if (it->second.last_use < lru->second.last_use) lru = it;
      }
      for (const std::string& key : lru->second.keys) {
        auto e = index_.find(key);
        if (e != index_.end() && e->second.bucket == lru->first) {
          dropped_blocks.push_back(SsdBlock{key, e->second.version, e->second.length,
                                            e->second.checksum,
                                            Pack(e->second.bucket, e->second.slot)});
          index_.erase(e);
          dropped.push_back(key);
        }
      }
      for (auto& [key, version] : lru->second.tombstones) {
        auto t = tombstones_.find(key);
        if (t != tombstones_.end() && t->second == version) carried.emplace_back(key, version);
      }
      removed_files.push_back(lru->second.file->path());
      if (lru->first == active_id_) active_.reset();
      buckets_.erase(lru);
    }
    stats_.dropped_by_lru += dropped.size();
  }
  for (const auto& path : removed_files) {
    std::error_code ec;
    fs::remove(path, ec);  // open readers keep the inode until they finish
  }
  if (opts_.on_drop) {
    for (const auto& key : dropped) opts_.on_drop(key);
  }
  if (opts_.on_drop_block) {
    for (const auto& b : dropped_blocks) opts_.on_drop_block(b);
  }
  BucketAttributes attrs{kFormatVersion,  opts_.cluster_id,   opts_.model_preset,
                         opts_.kv_layout, opts_.block_tokens, opts_.store_rank};
  uint32_t id = next_bucket_++;
  auto file = BucketFile::Create(BucketPath(opts_.dir, id), attrs, opts_.bucket_bytes,
                                 opts_.bucket_entries, opts_.on_sync);
  if (!file.ok()) return file.status();
  std::shared_ptr<BucketFile> shared(std::move(file).value());
  // A deleted bucket's tombstones that still matter go first into the new one (older files may
  // hold the versions they remove), committed before any new block.
  for (const auto& [key, version] : carried) {
    if (!shared->HasRoom(0, key.size())) break;
    (void)shared->Stage(SlotKind::kTombstone, key, version, {}, 0, /*start_writeback=*/false);
  }
  if (!carried.empty()) MC_RETURN_IF_ERROR(shared->Commit(opts_.fsync, nullptr));
  std::lock_guard<std::mutex> lock(mu_);
  buckets_[id] = Bucket{shared, {}, std::move(carried), ++use_clock_};
  active_ = shared;
  active_id_ = id;
  return Status::Ok();
}

Result<uint64_t> Hdf5Tier::Read(const std::string& key, uint64_t version,
                                std::span<std::byte> out) {
  return ReadBlock(key, version, out, /*verify=*/true);
}

Result<uint64_t> Hdf5Tier::ReadUnverified(const std::string& key, uint64_t version,
                                          std::span<std::byte> out) {
  return ReadBlock(key, version, out, /*verify=*/false);
}

namespace {
Status NotOnSsd(const std::string& key, uint64_t version, const char* held, uint64_t other) {
  std::string m = "block '" + key + "' version " + std::to_string(version) + " is not on SSD";
  if (held != nullptr) m += std::string(" (") + held + " " + std::to_string(other) + ")";
  return NotFound(std::move(m));
}
}  // namespace

Result<uint64_t> Hdf5Tier::ReadBlock(const std::string& key, uint64_t version,
                                     std::span<std::byte> out, bool verify) {
  Entry e;
  std::shared_ptr<BucketFile> file;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return NotOnSsd(key, version, nullptr, 0);
    if (it->second.version != version) {
      return NotOnSsd(key, version, "it holds version", it->second.version);
    }
    e = it->second;
    Bucket& b = buckets_.at(e.bucket);
    b.last_use = ++use_clock_;
    file = b.file;
  }
  if (out.size() < e.length) {
    return InvalidArgument("buffer of " + std::to_string(out.size()) + " B for a block of " +
                           std::to_string(e.length) + " B");
  }
  MC_RETURN_IF_ERROR(file->ReadData(e.offset, out.first(e.length)));
  if (verify && Checksum64(out.data(), e.length) != e.checksum) {
    return Corrupt("checksum mismatch for '" + key + "' in " + file->path());
  }
  return e.length;
}

Result<SsdBlock> Hdf5Tier::Lookup(const std::string& key, uint64_t version) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return NotOnSsd(key, version, nullptr, 0);
  const Entry& e = it->second;
  if (e.version != version) return NotOnSsd(key, version, "it holds version", e.version);
  return SsdBlock{key, e.version, e.length, e.checksum, Pack(e.bucket, e.slot)};
}

Result<SsdBlock> Hdf5Tier::LookupLatest(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return NotFound("block '" + key + "' is not on SSD");
  const Entry& e = it->second;
  return SsdBlock{key, e.version, e.length, e.checksum, Pack(e.bucket, e.slot)};
}

void Hdf5Tier::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  space_cv_.wait(lock, [&] { return queue_.empty() && !writing_; });
}

TierStats Hdf5Tier::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  TierStats s = stats_;
  s.blocks = index_.size();
  s.buckets = buckets_.size();
  s.bytes_on_disk = buckets_.size() * opts_.bucket_bytes;
  s.queued_bytes = queued_bytes_;
  return s;
}

}  // namespace mooncake::store::hdf5
