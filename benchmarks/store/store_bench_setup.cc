#include "store_bench_setup.h"

#include <cstdlib>
#include <cstring>

#include "cluster/peer_exchange.h"
#include "transport/factory/transport_factory.h"

namespace mooncake::bench {

Result<std::unique_ptr<StoreCluster>> StartStoreCluster(const cluster::Bootstrap& mpi,
                                                        const StoreClusterOptions& o) {
  if (o.stores < 1 || mpi.size() < o.stores + 2) {
    return InvalidArgument("a store needs 1 master, " + std::to_string(o.stores) +
                           " store rank(s) and at least 1 client: " + std::to_string(o.stores + 2) +
                           " ranks, the job has " + std::to_string(mpi.size()));
  }
  auto c = std::make_unique<StoreCluster>();
  const int rank = mpi.rank();
  c->clients = mpi.size() - 1 - o.stores;
  c->role = rank == 0          ? StoreRole::kMaster
            : rank <= o.stores ? StoreRole::kStore
                               : StoreRole::kClient;
  if (c->role == StoreRole::kClient) c->client_index = rank - 1 - o.stores;
  transport::TransportConfig tc;
  tc.backend = transport::Backend::kUcx;
  tc.ucx = o.ucx;
  if (rank == 0) tc.ucx.idle_spin = o.master_idle_spin;
  auto t = o.make_transport ? o.make_transport(rank, mpi.size())
                            : transport::CreateTransport(tc, Rank{rank}, mpi.size());
  if (!t.ok()) return t.status();
  c->transport = std::move(*t);
  c->rpc = std::make_unique<transport::Rpc>(*c->transport);

  std::vector<transport::MemoryRegion> exported;
  size_t bytes = c->role == StoreRole::kStore    ? o.store_dram
                 : c->role == StoreRole::kClient ? o.client_buffer
                                                 : 0;
  if (bytes > 0) {
    auto buffer = transport::HostBuffer::Create(*c->transport, bytes, /*transport_memory=*/true);
    if (!buffer.ok()) return buffer.status();
    c->memory = std::move(*buffer);
    c->region = c->memory.region();
    // Touch every page now, so first-touch faults are not measured as store time.
    std::memset(c->region.addr, 0, bytes);
    exported.push_back(c->region);
  }
  // The master's handlers must be in place before any client can call: Bootstrap is collective,
  // so registering them before it is enough.
  if (c->role == StoreRole::kMaster) {
    c->service = std::make_unique<store::MasterService>(o.service, *c->rpc, c->clock);
    c->service->Start();
  }
  auto role = c->role == StoreRole::kMaster  ? cluster::Role::kConductor
              : c->role == StoreRole::kStore ? cluster::Role::kStore
                                             : cluster::Role::kPrefill;
  auto peers =
      cluster::ExchangePeers(mpi, *c->transport, c->rpc.get(), role, exported, o.phase_timeout);
  if (!peers.ok()) return peers.status();
  std::vector<std::vector<transport::RemoteDescriptor>> regions;
  std::vector<int> store_ranks;
  for (auto& p : *peers) regions.push_back(p.regions);
  for (int s = 1; s <= o.stores; ++s) store_ranks.push_back(s);
  auto topo = store::StoreTopology::FromRegions(store_ranks, regions);
  if (!topo.ok()) return topo.status();
  c->topology = std::move(*topo);
  if (c->service) MC_RETURN_IF_ERROR(c->service->AddSegments(c->topology));
  if (o.standby && rank == 1) {
    c->standby = std::make_unique<store::StandbyNode>(*c->rpc, Rank{0}, c->topology);
    c->standby->Start();
  }
  if (o.standby && c->service) {
    store::JournalConfig jc;
    jc.standby = Rank{1};
    jc.send_timeout = o.phase_timeout;
    c->journal = std::make_unique<store::JournalSender>(*c->rpc, jc);
    c->service->SetJournal(c->journal.get());
    c->journal->Start();
  }
  if (c->role == StoreRole::kClient) {
    c->client = std::make_unique<store::StoreClient>(*c->transport, *c->rpc, Rank{0}, c->topology,
                                                     o.client);
  }
  MC_RETURN_IF_ERROR(mpi.Barrier(o.phase_timeout));  // segments registered before any call
  return c;
}

Status StopStoreCluster(const cluster::Bootstrap& mpi, StoreCluster& c, Nanos timeout) {
  MC_RETURN_IF_ERROR(mpi.Barrier(timeout));
  c.transport->BeginShutdown();
  MC_RETURN_IF_ERROR(mpi.Barrier(timeout));
  if (c.service) c.service->SetJournal(nullptr);
  if (c.journal) c.journal->Stop();
  if (c.service) c.service->Stop();
  c.rpc->Stop();
  c.client.reset();
  return c.transport->Close(timeout);
}

}  // namespace mooncake::bench
