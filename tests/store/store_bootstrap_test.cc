// The store's bring-up that store_bench and the mpi store tests use (benchmarks/
// store_bench_setup.h), in one process and without MPI: a master (the conductor's role), two
// store ranks and a client are threads that bootstrap over the loopback transport, once with
// cluster::InProcessBootstrap and once with the rendezvous bootstrap (each rank its own TCP
// connection to rank 0 on 127.0.0.1, as ranks that no launcher started together meet); the
// client puts objects of many sizes, one and two replicas, and gets every byte back verified.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "cluster/in_process_bootstrap.h"
#include "cluster/rendezvous_bootstrap.h"
#include "common/block_content.h"
#include "store_bench_setup.h"
#include "transport/loopback/loopback_transport.h"

namespace mooncake {
namespace {

constexpr int kRanks = 4;  // master, two store ranks, one client
constexpr int kObjects = 16;
const uint64_t kTag = ModelTag("store-bootstrap-test");

size_t SizeOf(int i) { return 1 + (i * 104729) % (200 * 1024); }

using Group = std::vector<std::unique_ptr<cluster::Bootstrap>>;

void PutAndGetVerifiedObjects(const Group& group) {
  std::shared_ptr<transport::LoopbackHub> hub;
  auto transports = transport::CreateLoopbackCluster(kRanks, &hub);
  bench::StoreClusterOptions o;
  o.stores = 2;
  o.store_dram = 8 << 20;
  o.client_buffer = 1 << 20;
  o.phase_timeout = std::chrono::seconds(30);
  o.make_transport = [&](int rank, int) -> Result<std::unique_ptr<transport::Transport>> {
    return std::move(transports[rank]);  // each rank's thread takes only its own
  };
  std::vector<Status> started(kRanks), stopped(kRanks);
  std::atomic<int> put_failures{0}, wrong_objects{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      const cluster::Bootstrap& b = *group[r];
      auto c = bench::StartStoreCluster(b, o);
      started[r] = c.status();
      if (!c.ok()) b.Abort(1);  // the others would wait at the next step
      if ((*c)->client) {
        for (int i = 0; i < kObjects; ++i) {
          std::vector<std::byte> v(SizeOf(i));
          FillBlockContent({static_cast<uint64_t>(i), 0, kTag}, v);
          const store::ReplicateConfig replicas{.replicas = 1 + static_cast<uint32_t>(i % 2)};
          if (!(*c)->client->Put("obj/" + std::to_string(i), v, replicas).ok()) ++put_failures;
        }
        for (int i = 0; i < kObjects; ++i) {
          auto got = (*c)->client->GetValue("obj/" + std::to_string(i));
          if (!got.ok() || got->size() != SizeOf(i) ||
              !VerifyBlockContent({static_cast<uint64_t>(i), 0, kTag}, *got)) {
            ++wrong_objects;
          }
        }
      }
      stopped[r] = bench::StopStoreCluster(b, **c, std::chrono::seconds(30));
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_TRUE(started[r].ok()) << "rank " << r << ": " << started[r].ToString();
    EXPECT_TRUE(stopped[r].ok()) << "rank " << r << ": " << stopped[r].ToString();
  }
  EXPECT_EQ(put_failures, 0);
  EXPECT_EQ(wrong_objects, 0);
}

TEST(StoreBootstrapTest, MasterTwoStoresAndAClientInOneProcessPutAndGetVerifiedObjects) {
  Group group;
  for (auto& b : cluster::InProcessBootstrap::CreateGroup(kRanks)) group.push_back(std::move(b));
  PutAndGetVerifiedObjects(group);
}

TEST(StoreBootstrapTest, TheSameOverTheRendezvousBootstrap) {
  const std::string secret = "store-bootstrap-test";
  cluster::RendezvousConfig c;
  c.size = kRanks;
  c.root_host = c.bind_address = "127.0.0.1";
  c.credential.resize(secret.size());
  std::memcpy(c.credential.data(), secret.data(), secret.size());
  Group group;
  for (int r = 0; r < kRanks; ++r) {
    c.rank = r;
    auto b = cluster::RendezvousBootstrap::Create(c);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    if (r == 0) c.root_port = (*b)->port();
    group.push_back(std::move(*b));
  }
  PutAndGetVerifiedObjects(group);
}

}  // namespace
}  // namespace mooncake
