#include "store_bench_ssd.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "common/log.h"

namespace mooncake::bench {

namespace fs = std::filesystem;

Result<std::unique_ptr<SsdBench>> SsdBench::Start(const cluster::Bootstrap& mpi, StoreCluster& c,
                                                  const SsdBenchOptions& o) {
  std::unique_ptr<SsdBench> b(new SsdBench());
  b->cluster_ = &c;
  const uint64_t dram = c.role == StoreRole::kStore ? c.region.length : 0;
  if (c.role == StoreRole::kMaster) {
    store::SpillCoordinatorConfig cc;
    cc.max_pending_bytes = uint64_t{1} << 40;  // never refuse: a refused block would be lost
    b->coordinator_ = std::make_unique<store::SpillCoordinator>(*c.rpc, *c.service, cc);
    b->coordinator_->Start();
  } else if (c.role == StoreRole::kStore) {
    b->dir_ = o.dir + "/rank" + std::to_string(mpi.rank());
    std::error_code ec;
    fs::remove_all(b->dir_, ec);
    store::hdf5::Hdf5TierOptions t;
    t.dir = b->dir_;
    t.capacity = o.capacity;
    t.bucket_bytes = std::min<uint64_t>(256ull << 20, o.capacity / 4);
    t.queue_bytes = std::max<uint64_t>(dram, 64ull << 20);  // never Busy: see above
    t.cluster_id = "store_bench";
    SsdBench* self = b.get();
    t.on_drop_block = [self](const store::SsdBlock& blk) {
      if (self->service_) self->service_->OnTierDrop(blk);
    };
    auto tier = store::hdf5::Hdf5Tier::Open(t, nullptr);
    if (!tier.ok()) return tier.status().WithContext("SSD tier in " + t.dir);
    b->tier_ = std::move(*tier);
    store::SsdStoreServiceConfig sc;
    sc.transport = c.transport.get();
    sc.staging.reader_threads = o.reader_threads;
    b->service_ =
        std::make_unique<store::SsdStoreService>(*c.rpc, *b->tier_, c.buffer(), Rank{0}, sc);
    b->service_->Start();
  }
  return b;
}

SsdBench::~SsdBench() {
  Stop();
  service_.reset();
  tier_.reset();
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

bool SsdBench::WaitSpills(Nanos timeout) {
  return coordinator_ == nullptr || coordinator_->WaitIdle(timeout);
}

size_t SsdBench::InDram(const std::vector<std::string>& keys) {
  if (cluster_->service == nullptr) return 0;
  return cluster_->service->WithMaster([&](store::MetadataMaster& m) {
    size_t n = 0;
    for (const auto& k : keys) {
      auto v = m.Get(k);
      if (!v.ok()) continue;
      n += std::any_of(v->replicas.begin(), v->replicas.end(),
                       [](const auto& r) { return r.tier == store::Tier::kDram; });
    }
    return n;
  });
}

std::string SsdBench::DropCaches() {
  if (!tier_) return "";
  tier_->Drain();
  size_t files = 0;
  for (const auto& de : fs::directory_iterator(dir_)) {
    int fd = open(de.path().c_str(), O_RDONLY);
    if (fd < 0) continue;
    if (fdatasync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0) ++files;
    close(fd);
  }
  std::string what = std::to_string(files) + " bucket files dropped (fadvise)";
  sync();
  int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
  if (fd >= 0 && write(fd, "3", 1) == 1) what += ", page cache dropped (drop_caches)";
  if (fd >= 0) close(fd);
  return what;
}

LocalReads SsdBench::ReadLocally(const std::vector<std::string>& keys, size_t size, Nanos min_time,
                                 bool one_pass, int threads) {
  LocalReads r;
  if (!tier_) return r;
  std::vector<std::string> mine;
  std::vector<uint64_t> versions;
  for (const auto& k : keys) {
    if (auto b = tier_->LookupLatest(k); b.ok()) {
      mine.push_back(k);
      versions.push_back(b->version);
    }
  }
  if (mine.empty()) return r;
  // One slot per block, as the client's buffer has (a promotion too writes each block to its
  // own place in the segment): one reused buffer would stay in cache and flatter the tier.
  std::vector<std::byte> buf(mine.size() * size, std::byte{1});  // pages touched before timing
  // Thread t reads keys t, t + T, t + 2T, ... (each its own slot), in passes until min_time.
  const size_t n_threads = std::clamp<size_t>(threads, 1, mine.size());
  std::vector<LocalReads> parts(n_threads);
  SteadyClock clock;
  const Nanos t0 = clock.Now();
  auto read_share = [&](size_t t) {
    LocalReads& p = parts[t];
    for (size_t i = t;; i += n_threads) {
      if (i >= mine.size()) {
        if (one_pass || clock.Now() - t0 >= min_time) break;
        i = t;
      }
      const Nanos c0 = clock.Now();
      auto n = tier_->Read(mine[i], versions[i], std::span<std::byte>(buf).subspan(i * size, size));
      p.lat_us.push_back(std::chrono::duration<float, std::micro>(clock.Now() - c0).count());
      ++p.calls;
      if (n.ok()) {
        p.bytes += *n;
      } else if (p.errors++ == 0) {
        p.first_error = n.status().ToString();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n_threads; ++t) pool.emplace_back(read_share, t);
  read_share(0);
  for (auto& th : pool) th.join();
  r.seconds = std::chrono::duration<double>(clock.Now() - t0).count();  // the last one's end
  for (LocalReads& p : parts) {
    r.calls += p.calls;
    r.bytes += p.bytes;
    r.errors += p.errors;
    r.lat_us.insert(r.lat_us.end(), p.lat_us.begin(), p.lat_us.end());
    if (r.first_error.empty()) r.first_error = p.first_error;
  }
  return r;
}

void SsdBench::Stop() {
  if (coordinator_) coordinator_->Stop();
  if (service_) service_->Stop();
  if (tier_) tier_->Drain();
}

}  // namespace mooncake::bench
