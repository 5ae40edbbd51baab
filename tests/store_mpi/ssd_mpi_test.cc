// The SSD tier across real ranks: rank 0 serves the master with a SpillCoordinator, rank 1 is a
// store rank with an Hdf5Tier under DIR/rank1 and an SsdStoreService, rank 2 is a client.
//   --mode spill DIR: the client puts 3x the store's DRAM in 64 KiB blocks, so most spill; then
//     gets every block back (twice, so some are promoted) with every byte verified.
//   --mode crash DIR: as spill, but the store rank raises SIGKILL after 40 blocks were written
//     while more are queued; rank 0 appends each block whose SSD replica it recorded to
//     DIR/completed.txt. The job dies (expected).
//   --mode crash-commit DIR: as crash, but the store rank dies inside a group commit, once at
//     least 40 blocks were written: the dying group's index slots are in the files, its blocks
//     were never acknowledged (recovery may find them; they must be whole).
//   --mode recover DIR: the store rank reopens DIR/rank1 (scan + checksums), the master
//     AddReplica()s what it reports; the client gets every block in completed.txt (each must be
//     served with correct bytes) and tries every block of the crashed run (whatever is served
//     must have correct bytes).
// Rank 0 prints "ssd_mpi_test <mode> OK ..." when every rank passed.
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "cluster/mpi/mpi_session.h"
#include "common/block_content.h"
#include "common/log.h"
#include "common/wire.h"
#include "store/hdf5/tier.h"
#include "store/ssd/ssd_coordinator.h"
#include "store/ssd/ssd_store_service.h"
#include "store_bench_setup.h"

namespace mooncake {
namespace {

const uint64_t kTag = ModelTag("ssd-mpi-test");
constexpr uint64_t kBlock = 64 << 10;
constexpr uint64_t kDram = 4 << 20;
constexpr int kBlocks = 3 * kDram / kBlock;  // 192
constexpr uint64_t kKillAfter = 40;

std::string Key(int i) { return "kv/" + std::to_string(i); }
std::vector<std::byte> Value(int i) {
  std::vector<std::byte> v(kBlock);
  FillBlockContent({static_cast<uint64_t>(i), 0, kTag}, v);
  return v;
}

struct Checker {
  uint32_t failures = 0;
  std::string first;
  void Expect(bool ok, const std::string& what) {
    if (ok) return;
    ++failures;
    if (first.empty()) first = what;
    log::Error("{}", what);
  }
};

// Puts every block; NoSpace means "DRAM is being spilled, retry".
void PutAll(store::StoreClient& client, Checker* ck) {
  for (int i = 0; i < kBlocks; ++i) {
    auto v = Value(i);
    Status s = client.Put(Key(i), v);
    for (int t = 0; s.code() == ErrorCode::kNoSpace && t < 2000; ++t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      s = client.Put(Key(i), v);
    }
    ck->Expect(s.ok(), "put " + Key(i) + ": " + s.ToString());
  }
}

// Gets `key`: OK with the right bytes, or (when `may_miss`) NotFound. Anything else fails.
bool GetVerified(store::StoreClient& client, int i, bool may_miss, Checker* ck) {
  std::vector<std::byte> out(kBlock);
  auto r = client.Get(Key(i), out);
  if (!r.ok()) {
    ck->Expect(may_miss && r.status().code() == ErrorCode::kNotFound,
               "get " + Key(i) + ": " + r.status().ToString());
    return false;
  }
  ck->Expect(*r == kBlock && VerifyBlockContent({static_cast<uint64_t>(i), 0, kTag}, out),
             "get " + Key(i) + ": wrong bytes");
  return true;
}

}  // namespace
}  // namespace mooncake

int main(int argc, char** argv) {
  using namespace mooncake;
  auto mpi_or = cluster::MpiSession::Init(&argc, &argv);
  if (!mpi_or.ok()) return 2;
  auto& mpi = **mpi_or;
  if (argc < 4 || std::string(argv[1]) != "--mode") {
    std::fprintf(stderr, "usage: ssd_mpi_test --mode spill|crash|crash-commit|recover DIR\n");
    return 2;
  }
  const std::string mode = argv[2], dir = argv[3];
  bench::StoreClusterOptions o;
  o.stores = 1;
  o.store_dram = kDram;
  o.client_buffer = 4096;
  o.master_idle_spin = o.ucx.idle_spin;
  o.service.master.promote_after = 2;
  o.service.master.lease = std::chrono::milliseconds(200);  // leases never pin all of DRAM
  auto c_or = bench::StartStoreCluster(mpi, o);
  if (!c_or.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", mpi.rank(), c_or.status().ToString().c_str());
    mpi.Abort(2);
  }
  auto& c = **c_or;
  Checker ck;
  auto barrier = [&] { ck.Expect(mpi.Barrier(std::chrono::seconds(120)).ok(), "barrier"); };

  std::unique_ptr<store::hdf5::Hdf5Tier> tier;
  std::unique_ptr<store::SsdStoreService> service;
  std::unique_ptr<store::SpillCoordinator> coordinator;
  store::hdf5::RecoveryReport report;
  std::ofstream completed;
  if (c.role == bench::StoreRole::kStore) {
    store::hdf5::Hdf5TierOptions t;
    t.dir = dir + "/rank" + std::to_string(mpi.rank());
    t.capacity = 256 << 20;
    t.bucket_bytes = 16 << 20;
    t.queue_bytes = 8 << 20;  // >= DRAM: the tier never refuses here (tested over loopback)
    if (mode == "spill") std::filesystem::remove_all(t.dir);  // a fresh tier each run
    t.on_drop_block = [&](const store::hdf5::SsdBlock& b) { service->OnTierDrop(b); };
    if (mode == "crash-commit") {
      // Slots written and flushed to the OS, fdatasync and acknowledgement not yet done.
      t.on_commit_stage = [&](store::hdf5::CommitStage s) {
        if (s == store::hdf5::CommitStage::kIndexFlushed && tier->Stats().spilled >= kKillAfter) {
          std::raise(SIGKILL);
        }
      };
    }
    auto opened = store::hdf5::Hdf5Tier::Open(t, &report);
    if (!opened.ok()) {
      std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
      mpi.Abort(2);
    }
    tier = std::move(*opened);
    service = std::make_unique<store::SsdStoreService>(*c.rpc, *tier, c.buffer(), Rank{0});
    if (mode == "crash") {
      service->on_spilled = [n = uint64_t{0}](const std::string&) mutable {
        if (++n == kKillAfter) std::raise(SIGKILL);  // while more spills are queued
      };
    }
    service->Start();
  } else if (c.role == bench::StoreRole::kMaster) {
    coordinator = std::make_unique<store::SpillCoordinator>(*c.rpc, *c.service);
    if (mode == "crash" || mode == "crash-commit") {
      completed.open(dir + "/completed.txt", std::ios::trunc);
      coordinator->on_spill_recorded = [&](const std::string& k) {
        completed << k << "\n" << std::flush;
      };
    }
    coordinator->Start();
  }
  // Recovery: the store rank's blocks are in the master before the client asks.
  std::vector<std::byte> mine;
  if (tier) mine = store::Encode(store::ToRecoveredBlocks(report));
  auto reports = mpi.Gather(mine, 0);
  if (coordinator && mode == "recover") {
    store::RecoveredBlocks b;
    ck.Expect(store::Decode(reports[1], &b).ok(), "recovery report");
    coordinator->AddRecovered(Rank{1}, b);
    // A killed process leaves no torn block: every index slot names bytes flushed before it.
    ck.Expect(b.dropped == 0, std::to_string(b.dropped) + " torn blocks at recovery");
    std::printf("recovered %zu blocks, dropped %llu\n", b.blocks.size(),
                static_cast<unsigned long long>(b.dropped));
  }
  barrier();

  uint64_t served = 0, expected = 0;
  if (c.client && mode != "recover") {
    PutAll(*c.client, &ck);
    for (int pass = 0; pass < 2; ++pass) {
      for (int i = 0; i < kBlocks; ++i) served += GetVerified(*c.client, i, false, &ck);
    }
  } else if (c.client) {
    std::ifstream in(dir + "/completed.txt");
    std::set<int> done;
    for (std::string k; std::getline(in, k);) done.insert(std::stoi(k.substr(3)));
    expected = done.size();
    ck.Expect(expected > 0, "completed.txt names no block");
    for (int i : done) served += GetVerified(*c.client, i, false, &ck);
    for (int i = 0; i < kBlocks; ++i) {
      if (!done.count(i)) GetVerified(*c.client, i, true, &ck);  // never wrong bytes
    }
  }
  barrier();
  store::SpillCoordinatorStats cs;
  store::MasterStats ms;
  if (coordinator) {
    coordinator->WaitIdle(std::chrono::seconds(60));
    cs = coordinator->Stats();
    ms = c.service->WithMaster([](store::MetadataMaster& m) { return m.Stats(); });
    coordinator->Stop();
    if (mode == "spill") {
      ck.Expect(cs.spilled >= kBlocks / 2, "only " + std::to_string(cs.spilled) + " spilled");
      ck.Expect(ms.ssd_hits > 0, "no hit served from SSD");
      ck.Expect(cs.promotions > 0, "nothing promoted");
    }
  }
  if (tier) tier->Drain();
  Status stop = bench::StopStoreCluster(mpi, c, std::chrono::seconds(30));
  ck.Expect(stop.ok(), "stop: " + stop.ToString());
  WireWriter w;
  w.Put(ck.failures);
  w.Put(served);
  w.Put(expected);
  w.PutString(ck.first);
  auto all = mpi.Gather(w.Take(), 0);
  if (mpi.rank() != 0) return ck.failures ? 1 : 0;
  uint32_t total = 0;
  uint64_t total_served = 0, total_expected = 0;
  for (size_t r = 0; r < all.size(); ++r) {
    WireReader in(all[r]);
    uint32_t f = 0;
    uint64_t s = 0, e = 0;
    std::string first;
    in.Get(&f);
    in.Get(&s);
    in.Get(&e);
    in.GetString(&first);
    total += f;
    total_served += s;
    total_expected += e;
    if (f) std::printf("rank %zu: %u failure(s), first: %s\n", r, f, first.c_str());
  }
  std::printf(
      "ssd_mpi_test %s %s: spilled=%llu ssd_hits=%llu promoted=%llu refused=%llu "
      "served=%llu completed_before_crash=%llu\n",
      mode.c_str(), total ? "FAILED" : "OK", static_cast<unsigned long long>(cs.spilled),
      static_cast<unsigned long long>(ms.ssd_hits), static_cast<unsigned long long>(cs.promotions),
      static_cast<unsigned long long>(cs.refused_at_conductor + cs.refused_by_tier),
      static_cast<unsigned long long>(total_served),
      static_cast<unsigned long long>(total_expected));
  return total ? 1 : 0;
}
