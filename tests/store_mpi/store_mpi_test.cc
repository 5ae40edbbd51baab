// The store across real ranks (mpirun, UCX over shm or tcp): rank 0 serves the master, ranks 1-2
// are store ranks, the rest clients. Two modes, one CTest entry each:
//   --mode concurrent: every client puts objects of many sizes (1 or 2 replicas) at once, then
//     every client reads every client's objects and verifies every byte; rank 0 checks that
//     replicas sit on distinct store ranks.
//   --mode eviction: 1 MiB store segments; one client fills store rank 1 past its watermark and
//     checks LRU order, lease protection, NotFound for evicted keys (never other bytes) and
//     NoSpace for an object larger than any segment, with every surviving byte intact.
// Rank 0 prints "store_mpi_test <mode> OK" when every rank passed. The lease is 10 s, about 200
// times what the puts it must outlive take on an idle machine, so a loaded 2-core machine still
// checks it (it was 3 s, and the check was skipped when the puts outlasted it).
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "cluster/mpi/mpi_session.h"
#include "common/block_content.h"
#include "common/log.h"
#include "common/wire.h"
#include "store_bench_setup.h"

namespace mooncake {
namespace {

using store::ReplicateConfig;
const uint64_t kTag = ModelTag("store-mpi-test");
constexpr uint64_t kKiB = 1024;

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

std::string Key(int client, int i) {
  return std::string("c").append(std::to_string(client)).append("/").append(std::to_string(i));
}
std::vector<std::byte> Value(uint64_t id, size_t size) {
  std::vector<std::byte> v(size);
  FillBlockContent({id, 0, kTag}, v);
  return v;
}
size_t SizeOf(int client, int i) { return 1 + (client * 7919 + i * 104729) % (300 * kKiB); }
constexpr int kObjects = 20;

void Concurrent(const cluster::Bootstrap& mpi, bench::StoreCluster& c, Checker* ck) {
  auto barrier = [&] { ck->Expect(mpi.Barrier(std::chrono::seconds(60)).ok(), "barrier"); };
  if (c.client) {
    for (int i = 0; i < kObjects; ++i) {
      auto v = Value(c.client_index * 1000 + i, SizeOf(c.client_index, i));
      Status s = c.client->Put(Key(c.client_index, i), v,
                               ReplicateConfig{.replicas = 1 + static_cast<uint32_t>(i % 2)});
      ck->Expect(s.ok(), "put " + Key(c.client_index, i) + ": " + s.ToString());
    }
  }
  barrier();
  if (c.client) {
    for (int w = 0; w < c.clients; ++w) {
      std::vector<std::string> keys;
      std::vector<std::vector<std::byte>> bufs;
      for (int i = 0; i < kObjects; ++i) {
        keys.push_back(Key(w, i));
        bufs.emplace_back(SizeOf(w, i));
      }
      std::vector<std::span<std::byte>> outs(bufs.begin(), bufs.end());
      auto got = c.client->BatchGet(keys, outs);
      for (int i = 0; i < kObjects; ++i) {
        bool ok = got[i].ok() && *got[i] == bufs[i].size() &&
                  VerifyBlockContent({static_cast<uint64_t>(w * 1000 + i), 0, kTag}, bufs[i]);
        ck->Expect(ok, "batch get " + keys[i] + ": " +
                           (got[i].ok() ? "wrong bytes" : got[i].status().ToString()));
        auto one = c.client->GetValue(keys[i]);
        ck->Expect(one.ok() && one->size() == bufs[i].size() &&
                       VerifyBlockContent({static_cast<uint64_t>(w * 1000 + i), 0, kTag}, *one),
                   "get " + keys[i]);
      }
    }
  }
  barrier();
  if (c.service) {
    for (int w = 0; w < c.clients; ++w) {
      for (int i = 0; i < kObjects; ++i) {
        auto view =
            c.service->WithMaster([&](store::MetadataMaster& m) { return m.Get(Key(w, i)); });
        std::set<int> ranks;
        if (view.ok()) {
          for (const auto& r : view->replicas) ranks.insert(r.rank.value);
        }
        ck->Expect(view.ok() && ranks.size() == static_cast<size_t>(1 + i % 2) &&
                       view->replicas.size() == ranks.size() && !ranks.count(0),
                   "replicas of " + Key(w, i) + " are not on distinct store ranks");
      }
    }
  }
}

// Store rank 1 holds 16 slots of 64 KiB: past the 0.90 watermark each put evicts one object.
void Eviction(bench::StoreCluster& c, Nanos lease, Checker* ck) {
  if (!c.client || c.client_index != 0) return;
  store::StoreClient& cl = *c.client;
  const ReplicateConfig on1{.preferred_ranks = {Rank{1}}};
  std::vector<std::byte> out(64 * kKiB);
  auto key = [](int i) { return Key(0, i); };
  for (int i = 0; i < 14; ++i) {
    ck->Expect(cl.Put(key(i), Value(i, 64 * kKiB), on1).ok(), "put " + key(i));
  }
  ck->Expect(cl.Get(key(2), out).ok(), "get k2");  // k2 becomes most recently used
  std::this_thread::sleep_for(lease + std::chrono::milliseconds(300));  // its lease runs out
  SteadyClock clock;
  const Nanos leased_at = clock.Now();
  ck->Expect(cl.Exists(key(0)).ok(), "exists k0");  // k0: most recent, and leased
  const std::vector<int> order = {1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 2};
  for (int j = 0; j < 16; ++j) {
    ck->Expect(cl.Put(key(14 + j), Value(14 + j, 64 * kKiB), on1).ok(), "put " + key(14 + j));
    if (j < static_cast<int>(order.size())) {
      auto g = cl.Get(key(order[j]), out);
      ck->Expect(g.status().code() == ErrorCode::kNotFound,
                 "after put " + std::to_string(j) + ", " + key(order[j]) +
                     " should be evicted (LRU order): " + g.status().ToString());
    }
  }
  const Nanos puts_took = clock.Now() - leased_at;
  auto g0 = cl.Get(key(0), out);
  ck->Expect(puts_took < lease, "the puts took " + std::to_string(puts_took.count() / 1000000) +
                                    " ms, longer than k0's lease: the machine stalled");
  ck->Expect(g0.ok() && VerifyBlockContent({0, 0, kTag}, out),
             "leased k0 was evicted: " + g0.status().ToString());
  for (int i = 1; i < 30; ++i) {
    auto g = cl.Get(key(i), out);
    if (i >= 17) {
      ck->Expect(g.ok() && VerifyBlockContent({static_cast<uint64_t>(i), 0, kTag}, out),
                 "survivor " + key(i) + ": " + g.status().ToString());
    } else {
      ck->Expect(g.status().code() == ErrorCode::kNotFound, "evicted " + key(i) + " not NotFound");
    }
  }
  // Larger than every segment: NoSpace at once, nothing evicted, every survivor intact.
  Status big = cl.Put("huge", Value(99, 2 * 1024 * kKiB));
  ck->Expect(big.code() == ErrorCode::kNoSpace, "oversized put: " + big.ToString());
  for (int i = 17; i < 30; ++i) {
    auto g = cl.Get(key(i), out);
    ck->Expect(g.ok() && VerifyBlockContent({static_cast<uint64_t>(i), 0, kTag}, out),
               "after the oversized put, " + key(i) + ": " + g.status().ToString());
  }
}

}  // namespace
}  // namespace mooncake

int main(int argc, char** argv) {
  using namespace mooncake;
  auto mpi = cluster::MpiSession::Init(&argc, &argv);
  if (!mpi.ok()) return 2;
  std::string mode = argc > 2 && std::string(argv[1]) == "--mode" ? argv[2] : "concurrent";
  bench::StoreClusterOptions o;
  o.stores = 2;
  o.client_buffer = 4096;
  o.master_idle_spin = o.ucx.idle_spin;
  const Nanos lease = std::chrono::seconds(10);
  if (mode == "eviction") {
    o.store_dram = 16 * 64 * kKiB;
    o.service.master.lease = lease;
  } else {
    o.store_dram = 32 << 20;
  }
  auto c = bench::StartStoreCluster(**mpi, o);
  if (!c.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", (*mpi)->rank(), c.status().ToString().c_str());
    (*mpi)->Abort(2);
  }
  Checker ck;
  if (mode == "eviction") {
    Eviction(**c, lease, &ck);
  } else {
    Concurrent(**mpi, **c, &ck);
  }
  Status stop = bench::StopStoreCluster(**mpi, **c, std::chrono::seconds(30));
  ck.Expect(stop.ok(), "stop: " + stop.ToString());
  WireWriter w;
  w.Put(ck.failures);
  w.PutString(ck.first);
  auto all = (*mpi)->Gather(w.Take(), 0);
  if ((*mpi)->rank() != 0) return ck.failures ? 1 : 0;
  uint32_t total = 0;
  for (size_t r = 0; r < all.size(); ++r) {
    WireReader in(all[r]);
    uint32_t f = 0;
    std::string first;
    in.Get(&f);
    in.GetString(&first);
    total += f;
    if (f) std::printf("rank %zu: %u failure(s), first: %s\n", r, f, first.c_str());
  }
  std::printf("store_mpi_test %s %s (%d ranks)\n", mode.c_str(), total ? "FAILED" : "OK",
              (*mpi)->size());
  return total ? 1 : 0;
}
